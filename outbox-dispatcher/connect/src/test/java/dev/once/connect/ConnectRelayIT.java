package dev.once.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.dispatch.DispatchListener;
import dev.once.dispatch.EventDispatcher;
import dev.once.dispatch.HandlerRegistration;
import dev.once.dispatch.KafkaEventDispatcher;
import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.HandlerClaimStore;
import dev.once.outbox.OutboxEvent;
import dev.once.outbox.OutboxWriter;
import dev.once.spi.SlotWatermarks;
import dev.once.relay.EventTransport;
import dev.once.relay.KafkaTransport;
import dev.once.relay.OutboxRelay;
import dev.once.relay.RelayContractIT;
import dev.once.relay.RelayListener;
import dev.once.relay.RelayOptions;
import dev.once.relay.TopicRouter;
import dev.once.relay.cdc.CdcRelay;
import dev.once.relay.cdc.CdcSettings;
import dev.once.test.ReplicationCleanup;
import dev.once.test.TestKafka;
import dev.once.test.TestSigning;
import dev.once.wire.RecordSigning;
import dev.once.wire.SigningKeys;
import dev.once.wire.WireFormat;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.apache.kafka.connect.util.clusters.WorkerHandle;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The outbox relayed by a real Kafka Connect cluster (two workers in-process, the Debezium PostgreSQL connector with
 * Once's transform, configured by the connector configuration shipped in this module), against a real PostgreSQL: the
 * relay contract every relay keeps, with the service's watermarks deciding when rows leave ({@link ConnectorRelay});
 * record for record what the embedded CDC relay publishes, in order per aggregate; and handled exactly once by Once's
 * dispatcher when the worker running the task is removed mid-stream.
 */
class ConnectRelayIT extends RelayContractIT {

    static final RecordSigning SIGNING = RecordSigning.require(
            SigningKeys.of(Map.of(TestSigning.KEY_ID, TestSigning.SECRET), null));
    static final int PARTITIONS = 3;

    static EmbeddedConnectCluster connect;
    static JdbcTemplate jdbc;
    static OutboxWriter writer;
    static TransactionTemplate tx;
    static final List<String[]> slots = new ArrayList<>();
    final List<ConnectorRelay> connectors = new ArrayList<>();

    @Override
    protected String bootstrapServers() {
        return connect.kafka().bootstrapServers();
    }

    @Override
    protected void createTopic(String topic, int partitions) {
        connect.kafka().createTopic(topic, partitions);
    }

    /** The contract's relay: one connector per test, whose name and slot a restarted one shares. */
    @Override
    protected OutboxRelay newRelay(String name, EventTransport transport, RelayOptions options) {
        transport.close(); // Connect's worker holds the producer
        ConnectorRelay relay = new ConnectorRelay(connect, db.dataSource(), db.server(), db.schema(), "once-" + prefix,
                "contract_" + prefix, prefix, SlotWatermarks.Options.ofDefaults().withInterval(Duration.ofMillis(200))
                .withRetention(options.retention()), Map.of("heartbeat.interval.ms", "500",
                "transforms.once.signing.current-key", SIGNING_KEY_ID,
                "transforms.once.signing.key." + SIGNING_KEY_ID, SIGNING_SECRET));
        connectors.add(relay);
        return relay;
    }

    @AfterEach
    void dropContractSlot() {
        stopRelays();
        connectors.stream().findFirst().ifPresent(ConnectorRelay::dropSlot);
        connectors.clear();
    }

    @BeforeAll
    static void start() {
        jdbc = new JdbcTemplate(db.dataSource());
        writer = OutboxWriter.create(db.dataSource());
        tx = new TransactionTemplate(new DataSourceTransactionManager(db.dataSource()));
        connect = new EmbeddedConnectCluster.Builder().name("once-connect-it").numWorkers(2).numBrokers(1)
                // a task whose worker left is reassigned after this delay (Connect's default waits 5 minutes)
                .workerProps(new HashMap<>(Map.of("scheduled.rebalance.max.delay.ms", "2000",
                        "offset.flush.interval.ms", "500")))
                .build();
        connect.start();
    }

    @AfterAll
    static void stop() {
        if (connect != null) {
            connect.stop();
        }
        slots.forEach(s -> ReplicationCleanup.drop(db.dataSource(), s[0], s[1]));
    }

    @Test
    void connect_publishes_every_event_with_the_same_topic_key_value_and_headers_as_the_embedded_relay_in_order_per_aggregate()
            throws Exception {
        String prefix = "same-" + Long.toHexString(System.nanoTime());
        String topic = prefix + ".order";
        connect.kafka().createTopic(topic, PARTITIONS);
        TestKafka.createTopic(topic, PARTITIONS);
        startConnector(connect, "once-same", prefix, Map.of());
        // the embedded CDC relay on a slot of its own, publishing to the suite's broker under the same topic names
        String slot = ("emb_" + db.schema()).toLowerCase();
        slots.add(new String[] {slot, slot});
        CdcSettings settings = CdcSettings.of(db.server().jdbcUrl(), db.server().username(), db.server().password(),
                db.schema()).withSlot(slot, slot).withTimings(Duration.ofMillis(500), Duration.ofMillis(200));
        try (KafkaTransport transport = new KafkaTransport(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                TestKafka.bootstrapServers()), TopicRouter.byAggregateType(prefix), KafkaTransport.ACK_TIMEOUT, SIGNING);
             OutboxRelay embedded = new CdcRelay("embedded", db.dataSource(), settings, transport,
                     RelayOptions.ofDefaults().withRetention(Duration.ofDays(1)), RelayListener.NONE)) {
            embedded.start();
            await().atMost(Duration.ofSeconds(60)).until(() -> slotActive(slot));

            List<UUID> appended = append(10_000, 50);

            Map<UUID, ConsumerRecord<byte[], byte[]>> viaConnect = firstCopies(connect.kafka().bootstrapServers(), topic,
                    appended);
            Map<UUID, ConsumerRecord<byte[], byte[]>> viaEmbedded = firstCopies(TestKafka.bootstrapServers(), topic,
                    appended);
            assertThat(viaConnect.keySet()).containsExactlyInAnyOrderElementsOf(appended);
            assertThat(viaEmbedded.keySet()).containsExactlyInAnyOrderElementsOf(appended);
            for (UUID id : appended) {
                ConsumerRecord<byte[], byte[]> a = viaConnect.get(id);
                ConsumerRecord<byte[], byte[]> b = viaEmbedded.get(id);
                assertThat(a.topic()).isEqualTo(b.topic());
                assertThat(a.partition()).as("partition of %s", id).isEqualTo(b.partition());
                assertThat(a.key()).as("key of %s", id).isEqualTo(b.key());
                assertThat(a.value()).as("value of %s", id).isEqualTo(b.value());
                assertThat(headers(a)).as("headers of %s", id).isEqualTo(headers(b));
                assertThat(SIGNING.verify(asString(a)).accepted()).as("signature of %s", id).isTrue();
            }
            assertThat(orderPerAggregate(viaConnect, appended)).as("Connect keeps each aggregate's order").isTrue();
            assertThat(orderPerAggregate(viaEmbedded, appended)).isTrue();
        }
    }

    @Test
    void the_task_moves_to_the_other_worker_when_its_worker_is_removed_mid_stream_the_handlers_take_effect_once_and_the_outbox_stays_empty()
            throws Exception {
        WorkerLoss loss = workerLoss(connect, "loss", Map.of());
        System.out.printf("connect worker loss: %d events, %d duplicate records, %d handler turns skipped, "
                + "task running on the other worker %.1f s after the removal%n", loss.events(), loss.duplicates(),
                loss.skipped(), loss.failoverSeconds());
    }

    /**
     * Connect's exactly-once source support ({@code exactly.once.source.support=enabled} on the workers, the
     * connector asking for it): the task's records and offsets commit in one Kafka transaction, and consumers read
     * committed records only, as Once's dispatcher does. The same worker loss, on a cluster of its own.
     */
    @Test
    void with_exactly_once_source_support_the_same_worker_loss_loses_nothing_and_takes_effect_once() throws Exception {
        Properties broker = new Properties(); // transactions on a single broker
        broker.put("transaction.state.log.replication.factor", "1");
        broker.put("transaction.state.log.min.isr", "1");
        EmbeddedConnectCluster exactlyOnce = new EmbeddedConnectCluster.Builder().name("once-connect-eos").numWorkers(2)
                .numBrokers(1).brokerProps(broker).workerProps(new HashMap<>(Map.of("scheduled.rebalance.max.delay.ms", "2000",
                        "offset.flush.interval.ms", "500", "exactly.once.source.support", "enabled")))
                .build();
        exactlyOnce.start();
        try {
            WorkerLoss loss = workerLoss(exactlyOnce, "eos", Map.of("exactly.once.support", "requested",
                    "transaction.boundary", "poll"));
            System.out.printf("connect worker loss, exactly-once source: %d events, %d duplicate records, %d handler "
                    + "turns skipped, task running on the other worker %.1f s after the removal%n", loss.events(),
                    loss.duplicates(), loss.skipped(), loss.failoverSeconds());
        } finally {
            exactlyOnce.stop();
        }
    }

    /** What one worker loss showed: duplicates on the topic, handler turns skipped, seconds until the task ran again. */
    record WorkerLoss(int events, long duplicates, long skipped, double failoverSeconds) {
    }

    /**
     * 10,000 events at 2,000/s through {@code cluster}, the worker running the task removed after a quarter, Once's
     * dispatcher (one TRANSACTIONAL and one LEASED handler) consuming; the service's sweep deletes rows as with
     * {@code once.outbox.relay.mode=external}. Checks that nothing is lost, every handler took effect once per event,
     * and the outbox stayed bounded.
     */
    static WorkerLoss workerLoss(EmbeddedConnectCluster cluster, String label, Map<String, String> connector)
            throws Exception {
        String prefix = label + "-" + Long.toHexString(System.nanoTime());
        String topic = prefix + ".order";
        cluster.kafka().createTopic(topic, PARTITIONS);
        cluster.kafka().createTopic(WireFormat.deadLetterTopic(topic), 1);
        String name = "once-" + label;
        startConnector(cluster, name, prefix, connector);
        String effect = "effect_" + label;
        jdbc.execute("CREATE TABLE " + effect + " (handler text NOT NULL, event_id uuid NOT NULL)");
        AtomicLong skipped = new AtomicLong();
        EventDispatcher dispatcher = new EventDispatcher(HandlerClaimStore.create(db.dataSource()),
                new DataSourceTransactionManager(db.dataSource()), List.of(
                HandlerRegistration.transactional("OrderPlaced", 1, "projection", e -> jdbc.update(
                        "INSERT INTO " + effect + " VALUES ('projection', ?)", e.eventId())),
                HandlerRegistration.leased("OrderPlaced", 1, "notifier", e -> jdbc.update(
                        "INSERT INTO " + effect + " VALUES ('notifier', ?)", e.eventId()))),
                ClaimPolicy.ofDefaults(), SIGNING, new DispatchListener() {
                    @Override
                    public void skippedDuplicate(String handlerKey) {
                        skipped.incrementAndGet();
                    }
                });
        // once.outbox.relay.mode=external: the service's watermarks delete rows once the connector's slot confirmed them
        try (KafkaEventDispatcher consumers = new KafkaEventDispatcher(cluster.kafka().bootstrapServers(),
                "handlers-" + prefix, dispatcher, 1, 3, topic);
             SlotWatermarks sweeper = new SlotWatermarks(db.dataSource(), slotOf(name),
                     SlotWatermarks.Options.ofDefaults().withInterval(Duration.ofMillis(200)))) {
            consumers.start();
            sweeper.start();
            AtomicLong mostRows = new AtomicLong();
            int events = 10_000;
            CompletableFuture<List<UUID>> writing = CompletableFuture.supplyAsync(() -> append(events, 50, 2_000, false));
            // the rows written before the task's first record are its start-up, however slow a loaded machine makes
            // it, not retention: the bound is watched from then on
            await().atMost(Duration.ofSeconds(60)).until(() -> recordsOn(cluster, topic) > 0);
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                mostRows.accumulateAndGet(outboxRows(), Math::max);
                return recordsOn(cluster, topic) >= events / 4;
            });
            WorkerHandle running = workerRunningTask(cluster, name);
            String removed = id(running);
            long removedAt = System.nanoTime();
            cluster.removeWorker(running);
            await().atMost(Duration.ofSeconds(120)).until(() -> taskRunningElsewhere(cluster, name, removed));
            double failoverSeconds = (System.nanoTime() - removedAt) / 1e9;
            List<UUID> appended = writing.get();

            Map<UUID, Integer> copies = copies(cluster.kafka().bootstrapServers(), topic, appended);
            assertThat(copies.keySet()).as("nothing lost").containsExactlyInAnyOrderElementsOf(appended);
            long duplicates = copies.values().stream().mapToInt(c -> c - 1).sum();
            await().atMost(Duration.ofSeconds(120)).until(() -> effects(effect, "projection") == events
                    && effects(effect, "notifier") == events);
            assertThat(distinctEffects(effect, "projection")).isEqualTo(events);
            assertThat(distinctEffects(effect, "notifier")).isEqualTo(events);
            assertThat(skipped.get()).as("each duplicate is skipped by both handlers").isGreaterThanOrEqualTo(duplicates);
            await().atMost(Duration.ofSeconds(30)).until(() -> outboxRows() == 0);
            assertThat(mostRows.get()).as("the outbox stays bounded: rows leave while the writes go on")
                    .isLessThan(events / 2);
            return new WorkerLoss(events, duplicates, skipped.get(), failoverSeconds);
        }
    }

    // -- helpers ------------------------------------------------------------------------------------------------

    /** The shipped connector configuration, pointed at the test's database, schema, slot and topic prefix. */
    static void startConnector(EmbeddedConnectCluster cluster, String name, String prefix, Map<String, String> extra)
            throws Exception {
        jdbc.update("DELETE FROM outbox_event"); // another test's rows: the connector's snapshot would relay them
        String slot = slotOf(name);
        slots.add(new String[] {slot, slot});
        ShippedConnector.createPublication(jdbc, db.schema(), slot);
        Map<String, String> config = ShippedConnector.config(db.server(), db.schema(), slot, prefix);
        config.putAll(extra);
        ShippedConnector.createHeartbeatTopic(cluster, config);
        cluster.configureConnector(name, config);
        cluster.assertions().assertConnectorAndAtLeastNumTasksAreRunning(name, 1, "the connector did not start");
        await().atMost(Duration.ofSeconds(60)).until(() -> slotActive(slot));
    }

    static String slotOf(String connector) {
        return (connector.replace('-', '_') + "_" + db.schema()).toLowerCase();
    }

    static boolean slotActive(String slot) {
        return Boolean.TRUE.equals(jdbc.queryForObject(
                "SELECT count(*) > 0 FROM pg_replication_slots WHERE slot_name = ? AND active", Boolean.class, slot));
    }

    static List<UUID> append(int events, int aggregates) {
        return append(events, aggregates, 0, true);
    }

    /**
     * {@code events} over {@code aggregates} orders, 100 per transaction, at {@code perSecond} (0: as fast as it can):
     * JSON with odd spacing and key order ({@code odd}: and a duplicate member, which a relay passes on and Once's
     * dispatcher refuses), binary payloads with a NUL byte, and a trace header on some.
     */
    static List<UUID> append(int events, int aggregates, int perSecond, boolean odd) {
        List<UUID> ids = new ArrayList<>(events);
        long start = System.nanoTime();
        for (int first = 0; first < events; first += 100) {
            int from = first;
            tx.executeWithoutResult(s -> {
                for (int n = from; n < Math.min(events, from + 100); n++) {
                    OutboxEvent.Builder event = OutboxEvent.builder().tenantId("acme").actorId("alice")
                            .aggregate("order", "o-" + (n % aggregates)).type("OrderPlaced", 1);
                    if (n % 10 == 0) {
                        event.payload(new byte[] {1, 0, (byte) n, (byte) 0xff}, "application/x-protobuf");
                    } else {
                        event.payloadJson("{ \"z\":" + n + ",  \"a\" : \"é\"" + (odd ? ", \"a\":\"dup\" }" : " }"));
                    }
                    if (n % 3 == 0) {
                        event.header(WireFormat.TRACEPARENT, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
                                .header("x-request", "r-" + n);
                    }
                    ids.add(writer.append(event.build()));
                }
            });
            if (perSecond > 0) {
                long due = start + (long) ((first + 100) * 1e9 / perSecond);
                java.util.concurrent.locks.LockSupport.parkNanos(Math.max(0, due - System.nanoTime()));
            }
        }
        return ids;
    }

    static long recordsOn(EmbeddedConnectCluster cluster, String topic) {
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(cluster.kafka().bootstrapServers())) {
            List<org.apache.kafka.common.TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new org.apache.kafka.common.TopicPartition(topic, p.partition())).toList();
            return consumer.endOffsets(partitions).values().stream().mapToLong(Long::longValue).sum();
        }
    }

    static WorkerHandle workerRunningTask(EmbeddedConnectCluster cluster, String connector) {
        String worker = cluster.connectorStatus(connector).tasks().get(0).workerId();
        return cluster.workers().stream().filter(w -> worker.equals(id(w)))
                .findFirst().orElseThrow(() -> new AssertionError("no worker " + worker + " in " + cluster.workers()));
    }

    /** A worker's id as Connect's status names it: its REST host and port. */
    static String id(WorkerHandle worker) {
        return worker.url().getHost() + ":" + worker.url().getPort();
    }

    static boolean taskRunningElsewhere(EmbeddedConnectCluster cluster, String connector, String removed) {
        var tasks = cluster.connectorStatus(connector).tasks();
        return !tasks.isEmpty() && "RUNNING".equals(tasks.get(0).state()) && !tasks.get(0).workerId().equals(removed);
    }

    static long outboxRows() {
        return jdbc.queryForObject("SELECT count(*) FROM outbox_event", Long.class);
    }

    static long effects(String table, String handler) {
        return jdbc.queryForObject("SELECT count(*) FROM " + table + " WHERE handler = ?", Long.class, handler);
    }

    static long distinctEffects(String table, String handler) {
        return jdbc.queryForObject("SELECT count(DISTINCT event_id) FROM " + table + " WHERE handler = ?", Long.class,
                handler);
    }

    static KafkaConsumer<byte[], byte[]> consumer(String bootstrap) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "it-" + UUID.randomUUID());
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2_000);
        return new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    /** Every record on {@code topic}, in partition order, once each of the {@code expected} events has arrived. */
    static List<ConsumerRecord<byte[], byte[]>> readAll(String bootstrap, String topic, List<UUID> expectedIds) {
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        java.util.Set<UUID> seen = new java.util.HashSet<>();
        java.util.Set<UUID> expected = new java.util.HashSet<>(expectedIds);
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(bootstrap)) {
            consumer.subscribe(List.of(topic));
            await().atMost(Duration.ofSeconds(180)).until(() -> {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                    records.add(record);
                    if (expected.contains(eventId(record))) {
                        seen.add(eventId(record));
                    }
                }
                return seen.size() == expected.size();
            });
        }
        return records;
    }

    static Map<UUID, ConsumerRecord<byte[], byte[]>> firstCopies(String bootstrap, String topic, List<UUID> expected) {
        Map<UUID, ConsumerRecord<byte[], byte[]>> first = new LinkedHashMap<>();
        readAll(bootstrap, topic, expected).forEach(r -> first.putIfAbsent(eventId(r), r));
        return first;
    }

    static Map<UUID, Integer> copies(String bootstrap, String topic, List<UUID> expected) {
        Map<UUID, Integer> copies = new HashMap<>();
        readAll(bootstrap, topic, expected).forEach(r -> copies.merge(eventId(r), 1, Integer::sum));
        return copies;
    }

    /** Whether, for every aggregate, its events' first copies come in the order they were appended. */
    static boolean orderPerAggregate(Map<UUID, ConsumerRecord<byte[], byte[]>> records, List<UUID> appended) {
        Map<String, List<UUID>> expected = new HashMap<>();
        Map<String, List<ConsumerRecord<byte[], byte[]>>> actual = new HashMap<>();
        for (UUID id : appended) {
            ConsumerRecord<byte[], byte[]> r = records.get(id);
            String key = new String(r.key(), StandardCharsets.UTF_8);
            expected.computeIfAbsent(key, k -> new ArrayList<>()).add(id);
            actual.computeIfAbsent(key, k -> new ArrayList<>()).add(r);
        }
        return actual.entrySet().stream().allMatch(e -> e.getValue().stream()
                .sorted(java.util.Comparator.comparingLong(ConsumerRecord::offset)).map(ConnectRelayIT::eventId)
                .toList().equals(expected.get(e.getKey())));
    }

    static UUID eventId(ConsumerRecord<byte[], byte[]> record) {
        return UUID.fromString(new String(record.headers().lastHeader(WireFormat.EVENT_ID).value(),
                StandardCharsets.UTF_8));
    }

    static List<String> headers(ConsumerRecord<byte[], byte[]> record) {
        List<String> headers = new ArrayList<>();
        for (Header h : record.headers()) {
            headers.add(h.key() + "=" + Arrays.toString(h.value()));
        }
        return headers;
    }

    static ConsumerRecord<String, byte[]> asString(ConsumerRecord<byte[], byte[]> r) {
        ConsumerRecord<String, byte[]> s = new ConsumerRecord<>(r.topic(), r.partition(), r.offset(),
                new String(r.key(), StandardCharsets.UTF_8), r.value());
        r.headers().forEach(h -> s.headers().add(h));
        return s;
    }
}
