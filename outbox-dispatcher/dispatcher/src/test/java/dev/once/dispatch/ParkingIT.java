package dev.once.dispatch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.audit.Operator;
import dev.once.audit.OperatorAudit;
import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.HandlerClaimStore;
import dev.once.idempotency.OnceMigrations;
import dev.once.idempotency.ParkedEvents;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.wire.RecordSigning;
import dev.once.wire.WireFormat;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.stream.IntStream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * Day two on a real broker and a real PostgreSQL: a failing key parks, with its later events, while every other key
 * and the partition's offsets move on; the retrier drains it in order once its dependency is back; a version without a
 * handler waits for the deploy that brings one; foreign types are skipped; operators act in bulk.
 */
class ParkingIT {

    /** The downstream outage: as long as a payment provider's or a mail service's short incident. */
    static final Duration OUTAGE = Duration.ofSeconds(60);

    static final ParkingPolicy FAST = new ParkingPolicy(Duration.ofMillis(200), 2.0, Duration.ofSeconds(2),
            Duration.ofMinutes(10));

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(12);

    static JdbcTemplate jdbc;
    static HandlerClaimStore store;
    static KafkaProducer<String, byte[]> producer;

    String topic;
    String group;
    final List<KafkaEventDispatcher> running = new ArrayList<>();
    final Map<String, AtomicInteger> unhandled = new ConcurrentHashMap<>();
    final AtomicInteger parkings = new AtomicInteger();

    @BeforeAll
    static void setUpAll() {
        OnceMigrations.migrate(db.dataSource());
        jdbc = new JdbcTemplate(db.dataSource());
        jdbc.execute("CREATE TABLE IF NOT EXISTS parking_effect (seq bigserial, handler text NOT NULL, "
                + "record_key text NOT NULL, n integer NOT NULL, event_id uuid NOT NULL)");
        store = HandlerClaimStore.create(db.dataSource());
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        producer = new KafkaProducer<>(config, new StringSerializer(), new ByteArraySerializer());
    }

    @BeforeEach
    void setUp() {
        topic = "p" + UUID.randomUUID().toString().substring(0, 8) + ".order";
        group = "g-" + topic;
        TestKafka.createTopic(topic, 2);
        TestKafka.createTopic(topic + WireFormat.DEAD_LETTER_SUFFIX, 1);
        jdbc.update("DELETE FROM parking_effect");
    }

    @AfterEach
    void stop() {
        running.forEach(KafkaEventDispatcher::close);
    }

    @Test
    void a_downstream_outage_parks_the_failing_keys_and_they_drain_in_order_once_it_is_over_with_no_operator() {
        Instant outageEnds = Instant.now().plus(OUTAGE);
        Set<String> downFor = Set.of("k1", "k2"); // the provider is down for these accounts' region
        start(FAST, UnhandledPolicy.ofDefaults(), HandlerRegistration.leased("OrderPlaced", 1, "mailer", event -> {
            if (downFor.contains(key(event)) && Instant.now().isBefore(outageEnds)) {
                throw new IllegalStateException("mail service unavailable (503)");
            }
            effect("mailer", event);
        }));

        List<String> keys = List.of("k1", "k2", "k3", "k4", "k5", "k6");
        IntStream.rangeClosed(1, 5).forEach(n -> keys.forEach(k -> publish(k, "OrderPlaced", 1, n)));

        await().atMost(Duration.ofSeconds(45)).until(() -> effects(k -> !downFor.contains(k)) == 20 && parked() == 10);
        assertThat(Instant.now()).as("the healthy keys did not wait for the outage to end").isBefore(outageEnds);
        assertThat(jdbc.queryForList("SELECT reason FROM once_parked_event WHERE group_id = ? ORDER BY reason",
                String.class, group)).containsOnly("failing", "behind").contains("failing", "behind");

        await().atMost(OUTAGE.plusSeconds(90)).until(() -> effects(k -> true) == 30 && parked() == 0);
        keys.forEach(k -> assertThat(sequence(k)).as("key %s in order", k).containsExactly(1, 2, 3, 4, 5));
        assertThat(jdbc.queryForObject("SELECT count(DISTINCT event_id) FROM parking_effect WHERE handler = 'mailer' "
                + "AND record_key LIKE 'k%'", Long.class)).as("each event once").isEqualTo(30);
        assertThat(deadLetters()).isZero();
    }

    @Test
    void a_rolling_deploy_holds_the_new_version_until_its_handler_runs_then_runs_it_once_in_order() {
        KafkaEventDispatcher old = start(FAST, UnhandledPolicy.ofDefaults(), projection(1));
        List<String> keys = List.of("r1", "r2", "r3");
        keys.forEach(k -> {
            publish(k, "OrderPlaced", 1, 1);
            publish(k, "OrderPlaced", 2, 2);
            publish(k, "OrderPlaced", 1, 3);
            publish(k, "OrderPlaced", 2, 4);
        });

        await().atMost(Duration.ofSeconds(60)).until(() -> effects(k -> k.startsWith("r")) == 3 && parked() == 9);
        assertThat(old.parked()).containsEntry("held-keys", 3L).containsEntry("held-events", 3L)
                .containsEntry("behind-events", 6L);
        assertThat(old.isRunning()).as("holding is no fault: the instance stays in service").isTrue();
        await().atMost(Duration.ofSeconds(60)).until(() -> uncommitted() == 0); // the parked events live in PostgreSQL
        assertThat(parked()).as("the group's offsets passed the events still parked").isEqualTo(9);

        start(FAST, UnhandledPolicy.ofDefaults(), projection(1), projection(2)); // the new version joins the group

        await().atMost(Duration.ofSeconds(90)).until(() -> effects(k -> k.startsWith("r")) == 12 && parked() == 0);
        keys.forEach(k -> assertThat(sequence(k)).as("key %s in order", k).containsExactly(1, 2, 3, 4));
        assertThat(jdbc.queryForObject("SELECT count(DISTINCT event_id) FROM parking_effect WHERE record_key LIKE 'r%'",
                Long.class)).isEqualTo(12);
        assertThat(deadLetters()).isZero();
    }

    @Test
    void on_a_shared_topic_foreign_types_are_skipped_and_counted_and_poison_is_still_dead_lettered_at_once() {
        start(FAST, UnhandledPolicy.ofDefaults(), projection(1));

        publish("s1", "InvoiceSent", 1, 1);
        publish("s1", "InvoiceSent", 3, 2);
        publish("s2", "PaymentCaptured", 1, 1);
        ProducerRecord<String, byte[]> poison = new ProducerRecord<>(topic, "s3", "{}".getBytes(StandardCharsets.UTF_8));
        poison.headers().add(WireFormat.EVENT_ID, UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8));
        poison.headers().add(WireFormat.EVENT_TYPE, "OrderPlaced".getBytes(StandardCharsets.UTF_8)); // no tenant
        poison.headers().add(WireFormat.EVENT_VERSION, "1".getBytes(StandardCharsets.UTF_8));
        TestKafka.sendAll(producer, List.of(poison));
        publish("s1", "OrderPlaced", 1, 3);
        publish("s3", "OrderPlaced", 1, 4);

        await().atMost(Duration.ofSeconds(60)).until(() -> effects(k -> k.startsWith("s")) == 2 && deadLetters() == 1);
        assertThat(unhandled).containsOnlyKeys("InvoiceSent:foreign_type:skipped", "PaymentCaptured:foreign_type:skipped");
        assertThat(unhandled.get("InvoiceSent:foreign_type:skipped")).hasValue(2);
        assertThat(parked()).isZero();
    }

    @Test
    void a_deadlock_in_a_transactional_handlers_own_statement_is_the_databases_failure_retried_in_place_never_parked() {
        Set<String> deadlocked = ConcurrentHashMap.newKeySet(); // each of d1's events meets a deadlock once
        start(FAST, UnhandledPolicy.ofDefaults(), HandlerRegistration.transactional("OrderPlaced", 1, "projection",
                event -> {
                    if (key(event).equals("d1") && deadlocked.add(event.eventId().toString())) {
                        jdbc.execute("DO $$ BEGIN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END $$");
                    }
                    effect("projection", event);
                }));
        IntStream.rangeClosed(1, 3).forEach(n -> List.of("d0", "d1").forEach(k -> publish(k, "OrderPlaced", 1, n)));

        await().atMost(Duration.ofSeconds(60)).until(() -> effects(k -> true) == 6);
        assertThat(deadlocked).hasSize(3);
        assertThat(sequence("d0")).containsExactly(1, 2, 3);
        assertThat(sequence("d1")).containsExactly(1, 2, 3);
        assertThat(parkings).as("no record parked: neither d1's nor another record of its run").hasValue(0);
        assertThat(parked()).isZero();
        assertThat(deadLetters()).isZero();
    }

    @Test
    void a_handler_that_throws_an_error_fails_as_one_that_throws_an_exception_and_its_key_drains_once_it_stops() {
        AtomicInteger calls = new AtomicInteger();
        start(FAST, UnhandledPolicy.ofDefaults(), HandlerRegistration.transactional("OrderPlaced", 1, "projection",
                event -> {
                    if (key(event).equals("e1") && n(event) == 1 && calls.getAndIncrement() < 3) {
                        throw new NoClassDefFoundError("com/example/NotDeployed"); // on the consumer, then the retrier
                    }
                    effect("projection", event);
                }));
        IntStream.rangeClosed(1, 2).forEach(n -> List.of("e0", "e1").forEach(k -> publish(k, "OrderPlaced", 1, n)));

        await().atMost(Duration.ofSeconds(60)).until(() -> effects(k -> true) == 4 && parked() == 0);
        assertThat(calls).as("three errors, the last two on the retrier's thread, then the call that succeeded")
                .hasValue(4);
        assertThat(sequence("e1")).containsExactly(1, 2);
        assertThat(sequence("e0")).containsExactly(1, 2);
        assertThat(deadLetters()).isZero();
    }

    @Test
    void a_parked_event_runs_again_only_for_the_handlers_that_failed_it_even_once_the_others_claims_are_gone() {
        java.util.concurrent.atomic.AtomicBoolean mailDown = new java.util.concurrent.atomic.AtomicBoolean(true);
        start(FAST, UnhandledPolicy.ofDefaults(), projection(1), HandlerRegistration.leased("OrderPlaced", 1, "mailer",
                event -> {
                    if (mailDown.get()) {
                        throw new IllegalStateException("mail service unavailable (503)");
                    }
                    effect("mailer", event);
                }));
        publish("r1", "OrderPlaced", 1, 1);

        await().atMost(Duration.ofSeconds(60)).until(() -> parked() == 1 && effects(k -> true) == 1);
        UUID event = jdbc.queryForObject("SELECT event_id FROM parking_effect WHERE handler = 'projection'", UUID.class);
        // the projection's claim is gone, as claims are once the claim retention has passed, while the mailer fails on
        assertThat(jdbc.update("DELETE FROM once_handler_claim WHERE event_id = ? AND status = 2", event)).isEqualTo(1);
        ParkedEvents operators = ParkedEvents.create(db.dataSource());
        int attempts = operators.list(ParkedEvents.Filter.all().group(group), 1).get(0).attempts();
        await().atMost(Duration.ofSeconds(60)).until(() ->
                operators.list(ParkedEvents.Filter.all().group(group), 1).get(0).attempts() >= attempts + 2);
        mailDown.set(false);

        await().atMost(Duration.ofSeconds(60)).until(() -> parked() == 0 && effects(k -> true) >= 2);
        assertThat(jdbc.queryForList("SELECT handler FROM parking_effect ORDER BY seq", String.class))
                .as("the projection ran once; the retries ran the mailer alone").containsExactly("projection", "mailer");
    }

    @Test
    void operators_retry_and_abandon_in_bulk_after_a_dry_run_and_the_keys_behind_run_in_order() {
        Set<String> broken = ConcurrentHashMap.newKeySet();
        broken.add("b1:1");
        broken.add("b2:1");
        ParkingPolicy shortWindow = new ParkingPolicy(Duration.ofMillis(200), 2.0, Duration.ofMillis(400),
                Duration.ofSeconds(1));
        start(shortWindow, UnhandledPolicy.ofDefaults(), HandlerRegistration.leased("OrderPlaced", 1, "mailer", event -> {
            if (broken.contains(key(event) + ":" + n(event))) {
                throw new IllegalArgumentException("no such mailbox: " + key(event));
            }
            effect("mailer", event);
        }));
        IntStream.rangeClosed(1, 3).forEach(n -> List.of("b1", "b2").forEach(k -> publish(k, "OrderPlaced", 1, n)));

        await().atMost(Duration.ofSeconds(60)).until(() -> failed() == 2 && deadLetters() == 2);
        assertThat(deadLetterRecords(2)).as("dead-lettered once the retry window passed, each with its reason")
                .allSatisfy(dead -> {
                    assertThat(header(dead, WireFormat.DLT_REASON)).contains("no such mailbox: " + dead.key());
                    assertThat(header(dead, WireFormat.DLT_HANDLER)).isEqualTo("mailer");
                }).extracting(ConsumerRecord::key).containsExactlyInAnyOrder("b1", "b2");
        ParkedEvents operators = ParkedEvents.create(db.dataSource());
        ParkedEvents.Filter mine = ParkedEvents.Filter.all().group(group);
        assertThat(operators.count(mine.handler("mailer"))).isEqualTo(new ParkedEvents.Counts(2, 2));
        assertThat(operators.count(mine)).isEqualTo(new ParkedEvents.Counts(2, 6));
        assertThat(operators.count(mine.eventType("InvoiceSent"))).isEqualTo(new ParkedEvents.Counts(0, 0));
        assertThat(operators.count(mine.tenant("globex"))).isEqualTo(new ParkedEvents.Counts(0, 0));
        assertThat(operators.count(mine.olderThan(Duration.ofHours(1)))).isEqualTo(new ParkedEvents.Counts(0, 0));
        ParkedEvents.ParkedEvent b1 = operators.list(mine, 100).stream()
                .filter(e -> "b1".equals(e.recordKey()) && "failed".equals(e.status())).findFirst().orElseThrow();
        assertThat(b1.exceptionClass()).isEqualTo(IllegalArgumentException.class.getName());
        assertThat(b1.message()).isEqualTo("no such mailbox: b1");
        assertThat(b1.handlerKeys()).containsExactly("mailer");
        assertThat(b1.attempts()).isGreaterThanOrEqualTo(2);
        assertThat(b1.fingerprint()).hasSize(16);

        broken.remove("b1:1"); // b1's mailbox exists now; b2's does not: it fails again, then is abandoned
        assertThat(operators.failureGroups(mine.handler("mailer"), 10)).as("b1 and b2 failed for one cause")
                .filteredOn(g -> g.fingerprint().equals(b1.fingerprint())).singleElement()
                .satisfies(g -> assertThat(List.of(g.events(), g.keys())).containsExactly(2L, 2L));
        Operator ops = new Operator("ops", Operator.API, "mailboxes created");
        assertThat(operators.retry(mine.handler("mailer").failure(b1.fingerprint()), ops)).isEqualTo(2);
        assertThat(OperatorAudit.create(db.dataSource()).recent(1)).singleElement().satisfies(entry -> {
            assertThat(List.of(entry.operator(), entry.via(), entry.action(), entry.reason()))
                    .containsExactly("ops", "api", "parked.retry", "mailboxes created");
            assertThat(entry.target()).isEqualTo(Map.of("group", group, "handler_key", "mailer",
                    "failure", b1.fingerprint()));
            assertThat(entry.affected()).isEqualTo(2);
        });
        await().atMost(Duration.ofSeconds(60)).until(() -> sequence("b1").size() == 3);
        assertThat(sequence("b1")).containsExactly(1, 2, 3);
        await().atMost(Duration.ofSeconds(60)).until(() -> failed() == 1);

        assertThat(operators.abandon(mine.eventType("OrderPlaced").failure(IllegalArgumentException.class.getName()), ops))
                .isEqualTo(1);
        await().atMost(Duration.ofSeconds(60)).until(() -> sequence("b2").size() == 2 && parked() == 0);
        assertThat(sequence("b2")).containsExactly(2, 3);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM once_parked_event WHERE group_id = ? AND status = 'abandoned'",
                Long.class, group)).isEqualTo(1);
    }

    KafkaEventDispatcher start(ParkingPolicy parking, UnhandledPolicy policy, HandlerRegistration... handlers) {
        DispatchListener counting = new DispatchListener() {
            @Override
            public void unhandled(String eventType, String reason, String action) {
                unhandled.computeIfAbsent(eventType + ":" + reason + ":" + action, k -> new AtomicInteger()).incrementAndGet();
            }

            @Override
            public void parked(String reason) {
                parkings.incrementAndGet();
            }
        };
        EventDispatcher core = new EventDispatcher(store, new DataSourceTransactionManager(db.dataSource()),
                List.of(handlers), ClaimPolicy.custom().lease(Duration.ofSeconds(5)).ttl(Duration.ofDays(1)).build(),
                RecordSigning.off(), counting, io.micrometer.observation.ObservationRegistry.NOOP, policy);
        KafkaEventDispatcher dispatcher = new KafkaEventDispatcher(
                Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers()),
                Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers()), group, core, 1,
                RetryPolicy.ofDefaults(), Parking.on(db.dataSource(), parking), null, topic);
        running.add(dispatcher);
        dispatcher.start();
        return dispatcher;
    }

    static HandlerRegistration projection(int version) {
        return HandlerRegistration.transactional("OrderPlaced", version, "projection", event -> effect("projection", event));
    }

    static void effect(String handler, HandledEvent event) {
        jdbc.update("INSERT INTO parking_effect (handler, record_key, n, event_id) VALUES (?, ?, ?, ?)", handler,
                key(event), n(event), event.eventId());
    }

    static String key(HandledEvent event) {
        return event.headers().get("test-key");
    }

    static int n(HandledEvent event) {
        return Integer.parseInt(event.headers().get("test-n"));
    }

    void publish(String key, String type, int version, int n) {
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, key,
                ("{\"n\":" + n + "}").getBytes(StandardCharsets.UTF_8));
        Map.of(WireFormat.EVENT_ID, UUID.randomUUID().toString(), WireFormat.TENANT_ID, "acme",
                WireFormat.ACTOR_ID, "alice", WireFormat.EVENT_TYPE, type, WireFormat.EVENT_VERSION,
                Integer.toString(version), "test-key", key, "test-n", Integer.toString(n))
                .forEach((name, value) -> record.headers().add(name, value.getBytes(StandardCharsets.UTF_8)));
        TestKafka.sendAll(producer, List.of(record));
    }

    long effects(Predicate<String> keys) {
        return jdbc.queryForList("SELECT record_key FROM parking_effect", String.class).stream().filter(keys).count();
    }

    List<Integer> sequence(String key) {
        return jdbc.queryForList("SELECT n FROM parking_effect WHERE record_key = ? ORDER BY seq", Integer.class, key);
    }

    long parked() {
        return jdbc.queryForObject("SELECT count(*) FROM once_parked_event WHERE group_id = ? AND status <> 'abandoned'",
                Long.class, group);
    }

    long failed() {
        return jdbc.queryForObject("SELECT count(*) FROM once_parked_event WHERE group_id = ? AND status = 'failed'",
                Long.class, group);
    }

    /** Records of the topic the group has not committed its offsets past. */
    long uncommitted() {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group); // reads the group's offsets; never joins it
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(config, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            Set<TopicPartition> partitions = Set.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
            Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(partitions);
            return consumer.endOffsets(partitions).entrySet().stream().mapToLong(end -> end.getValue()
                    - (committed.get(end.getKey()) == null ? 0 : committed.get(end.getKey()).offset())).sum();
        }
    }

    /** The first {@code n} records of the dead-letter topic. */
    List<ConsumerRecord<String, byte[]>> deadLetterRecords(int n) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(config, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.assign(List.of(new TopicPartition(topic + WireFormat.DEAD_LETTER_SUFFIX, 0)));
            consumer.seekToBeginning(consumer.assignment());
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
                return records.size() >= n;
            });
        }
        return records.subList(0, n);
    }

    static String header(ConsumerRecord<String, byte[]> record, String name) {
        return new String(record.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
    }

    long deadLetters() {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(config, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            TopicPartition dlt = new TopicPartition(topic + WireFormat.DEAD_LETTER_SUFFIX, 0);
            return consumer.endOffsets(List.of(dlt)).get(dlt);
        }
    }
}
