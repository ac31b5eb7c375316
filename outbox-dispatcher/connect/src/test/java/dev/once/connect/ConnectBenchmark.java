package dev.once.connect;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.idempotency.OnceMigrations;
import dev.once.spi.SlotWatermarks;
import dev.once.relay.KafkaTransport;
import dev.once.relay.OutboxRelay;
import dev.once.relay.RelayListener;
import dev.once.relay.RelayOptions;
import dev.once.relay.TopicRouter;
import dev.once.relay.cdc.CdcRelay;
import dev.once.relay.cdc.CdcSettings;
import dev.once.test.Paced;
import dev.once.test.PostgresServer;
import dev.once.test.ReplicationCleanup;
import dev.once.test.TestDatabase;
import dev.once.test.TestPostgres;
import dev.once.test.TestSigning;
import dev.once.wire.RecordSigning;
import dev.once.wire.SigningKeys;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The outbox relayed by Kafka Connect (the shipped connector configuration, Debezium's PostgreSQL connector and
 * once-connect, one task on a two-worker cluster, the service's watermarks deleting what the connector's slot
 * confirmed, as with {@code once.outbox.relay.mode=external}) against the embedded CDC relay (the same rule), same
 * database, same broker, same rows, one after the other in the same run, twice each (Connect, embedded, embedded,
 * Connect):
 * <ul>
 *   <li>latency: one row per transaction at {@code --rate} (2,000/s) for {@code --seconds} (10) after 2 s of
 *       warm-up; from the row's insert (the database clock, in a header) to the broker's append time (the topic keeps
 *       {@code LogAppendTime}), p50 and p99;</li>
 *   <li>drain: {@code --rows} (100,000) rows committed in one transaction; from the commit until the last is on the
 *       topic.</li>
 * </ul>
 * Runs from {@code benchmarks/run connect [--rows 100000 --rate 2000 --seconds 10]}.
 */
public final class ConnectBenchmark {

    static final RecordSigning SIGNING = RecordSigning.require(
            SigningKeys.of(Map.of(TestSigning.KEY_ID, TestSigning.SECRET), null));
    static final String APPENDED = "x-bench-appended";
    static final int PARTITIONS = 6;

    private ConnectBenchmark() {
    }

    record Result(double drain, double p50, double p99) {
    }

    public static void main(String[] args) throws Exception {
        int rows = 100_000;
        int rate = 2_000;
        int seconds = 10;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--rows" -> rows = Integer.parseInt(args[i + 1]);
                case "--rate" -> rate = Integer.parseInt(args[i + 1]);
                case "--seconds" -> seconds = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        PostgresServer server = TestPostgres.server();
        String schema = "bench_connect_" + Long.toHexString(System.nanoTime());
        EmbeddedConnectCluster connect = new EmbeddedConnectCluster.Builder().name("once-connect-bench").numWorkers(2)
                .numBrokers(1).workerProps(new HashMap<>(Map.of("offset.flush.interval.ms", "1000"))).build();
        connect.start();
        try (HikariDataSource ds = TestDatabase.newDataSource(schema, 8, null)) {
            JdbcTemplate admin = new JdbcTemplate(ds);
            admin.execute("CREATE SCHEMA IF NOT EXISTS " + schema);
            OnceMigrations.migrate(ds);
            System.out.printf(Locale.ROOT, "connect benchmark: %d rows drained, latency at %d events/s over %d s, on %s%n",
                    rows, rate, seconds, server);
            Map<String, List<Result>> results = new java.util.LinkedHashMap<>();
            int run = 0;
            for (String variant : List.of("connect", "embedded", "embedded", "connect")) {
                admin.update("DELETE FROM outbox_event"); // each variant starts on an empty outbox
                String prefix = "bench" + (run++) + "-" + Long.toHexString(System.nanoTime());
                String topic = prefix + ".order";
                connect.kafka().createTopic(topic, PARTITIONS, 1, Map.of("message.timestamp.type", "LogAppendTime"));
                Result result = variant.equals("connect")
                        ? viaConnect(connect, server, schema, ds, prefix, topic, rows, rate, seconds)
                        : viaEmbedded(connect, server, schema, ds, prefix, topic, rows, rate, seconds);
                System.out.printf(Locale.ROOT, "  %-9s drain %8.0f events/s   commit->Kafka p50 %6.1f ms  p99 %6.1f ms%n",
                        variant, result.drain(), result.p50(), result.p99());
                results.computeIfAbsent(variant, v -> new ArrayList<>()).add(result);
            }
            Result c = mean(results.get("connect"));
            Result e = mean(results.get("embedded"));
            System.out.printf(Locale.ROOT, "%n%-34s %10s %9s %9s%n", "relay (means of 2)", "drain ev/s", "p50 ms", "p99 ms");
            System.out.printf(Locale.ROOT, "%-34s %10.0f %9.1f %9.1f%n", "embedded CDC relay", e.drain(), e.p50(), e.p99());
            System.out.printf(Locale.ROOT, "%-34s %10.0f %9.1f %9.1f%n", "Kafka Connect + once-connect", c.drain(), c.p50(),
                    c.p99());
            System.out.printf(Locale.ROOT, "Connect / embedded: drain %.2fx (target >= 0.8), p99 %.2fx%n",
                    c.drain() / e.drain(), c.p99() / e.p99());
        } finally {
            connect.stop();
            try (HikariDataSource ds = TestDatabase.newDataSource("public", 1, null)) {
                new JdbcTemplate(ds).execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            }
        }
    }

    static Result mean(List<Result> runs) {
        return new Result(runs.stream().mapToDouble(Result::drain).average().orElse(Double.NaN),
                runs.stream().mapToDouble(Result::p50).average().orElse(Double.NaN),
                runs.stream().mapToDouble(Result::p99).average().orElse(Double.NaN));
    }

    static Result viaConnect(EmbeddedConnectCluster connect, PostgresServer server, String schema, HikariDataSource ds,
                             String prefix, String topic, int rows, int rate, int seconds) throws Exception {
        String slot = ("bench_con_" + prefix.replace('-', '_')).toLowerCase();
        JdbcTemplate jdbc = new JdbcTemplate(ds);
        ShippedConnector.createPublication(jdbc, schema, slot);
        String name = "bench-" + prefix;
        // once.outbox.relay.mode=external: the service's watermarks delete rows once the connector's slot confirmed
        // them, as the embedded relay's do
        try (SlotWatermarks sweeper = new SlotWatermarks(ds, slot, SlotWatermarks.Options.ofDefaults())) {
            sweeper.start();
            Map<String, String> config = ShippedConnector.config(server, schema, slot, prefix);
            ShippedConnector.createHeartbeatTopic(connect, config);
            connect.configureConnector(name, config);
            connect.assertions().assertConnectorAndAtLeastNumTasksAreRunning(name, 1, "the connector did not start");
            awaitSlotActive(jdbc, slot);
            return measure(connect, jdbc, topic, rows, rate, seconds);
        } finally {
            if (connect.connectors().contains(name)) {
                connect.deleteConnector(name);
            }
            ReplicationCleanup.drop(ds, slot, slot);
        }
    }

    static Result viaEmbedded(EmbeddedConnectCluster connect, PostgresServer server, String schema, HikariDataSource ds,
                              String prefix, String topic, int rows, int rate, int seconds) throws Exception {
        String slot = ("bench_emb_" + prefix.replace('-', '_')).toLowerCase();
        JdbcTemplate jdbc = new JdbcTemplate(ds);
        CdcSettings settings = CdcSettings.of(server.jdbcUrl(), server.username(), server.password(), schema)
                .withSlot(slot, slot);
        try (KafkaTransport transport = new KafkaTransport(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                connect.kafka().bootstrapServers()), TopicRouter.byAggregateType(prefix), Duration.ofSeconds(30), SIGNING);
             OutboxRelay relay = new CdcRelay("bench", ds, settings, transport, RelayOptions.ofDefaults(),
                     RelayListener.NONE)) {
            relay.start();
            awaitSlotActive(jdbc, slot);
            return measure(connect, jdbc, topic, rows, rate, seconds);
        } finally {
            ReplicationCleanup.drop(ds, slot, slot);
        }
    }

    /** Latency at the rate (after a warm-up), then the drain of {@code rows} committed together. */
    static Result measure(EmbeddedConnectCluster connect, JdbcTemplate jdbc, String topic, int rows, int rate,
                          int seconds) throws Exception {
        String bootstrap = connect.kafka().bootstrapServers();
        long warm = steady(jdbc, rate, 2);
        awaitOnTopic(bootstrap, topic, warm);
        Map<TopicPartition, Long> from = endOffsets(bootstrap, topic);
        long window = steady(jdbc, rate, seconds);
        awaitOnTopic(bootstrap, topic, warm + window);
        List<Long> latencies = latencies(bootstrap, topic, from);
        latencies.sort(Long::compare);

        long before = total(endOffsets(bootstrap, topic));
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type,
                                          event_version, payload)
                SELECT gen_random_uuid(), 'acme', 'alice', 'order', 'o-' || (n % 1000), 'OrderPlaced', 1,
                       convert_to(jsonb_build_object('n', n, 'note', repeat('x', 170))::text, 'UTF8')
                FROM generate_series(1, ?) AS n ORDER BY n
                """, rows);
        long committed = System.nanoTime();
        awaitOnTopic(bootstrap, topic, before + rows);
        double drain = rows / ((System.nanoTime() - committed) / 1e9);
        return new Result(drain, percentile(latencies, 0.50), percentile(latencies, 0.99));
    }

    /** One row per transaction at {@code rate} from two paced threads, its insert time in a header; returns rows. */
    static long steady(JdbcTemplate jdbc, int rate, int seconds) throws InterruptedException {
        return Paced.run(2, rate, Duration.ofSeconds(seconds), n -> jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type,
                                          event_version, payload, headers)
                VALUES (gen_random_uuid(), 'acme', 'alice', 'order', ?, 'OrderPlaced', 1,
                        convert_to(jsonb_build_object('n', ?, 'note', repeat('x', 170))::text, 'UTF8'),
                        jsonb_build_object(?, CAST(CAST(extract(epoch FROM clock_timestamp()) * 1000 AS bigint) AS text)))
                """, "s-" + (n % 100), n, APPENDED));
    }

    static void awaitSlotActive(JdbcTemplate jdbc, String slot) {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (!Boolean.TRUE.equals(jdbc.queryForObject(
                "SELECT count(*) > 0 FROM pg_replication_slots WHERE slot_name = ? AND active", Boolean.class, slot))) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("slot " + slot + " did not become active");
            }
            LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
        }
    }

    static void awaitOnTopic(String bootstrap, String topic, long records) {
        long deadline = System.nanoTime() + Duration.ofSeconds(600).toNanos();
        while (total(endOffsets(bootstrap, topic)) < records) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(topic + " did not reach " + records + " records");
            }
            LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
        }
    }

    static long total(Map<TopicPartition, Long> offsets) {
        return offsets.values().stream().mapToLong(Long::longValue).sum();
    }

    static KafkaConsumer<byte[], byte[]> consumer(String bootstrap) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "bench-" + UUID.randomUUID());
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5_000);
        return new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    static Map<TopicPartition, Long> endOffsets(String bootstrap, String topic) {
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(bootstrap)) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            return consumer.endOffsets(partitions);
        }
    }

    /** Broker append time minus insert time of every record after {@code from}, in nanoseconds. */
    static List<Long> latencies(String bootstrap, String topic, Map<TopicPartition, Long> from) {
        Map<TopicPartition, Long> to = endOffsets(bootstrap, topic);
        List<Long> latencies = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(bootstrap)) {
            consumer.assign(from.keySet());
            from.forEach(consumer::seek);
            long remaining = total(to) - total(from);
            while (remaining > 0) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(500))) {
                    if (record.offset() >= to.get(new TopicPartition(record.topic(), record.partition()))) {
                        continue;
                    }
                    remaining--;
                    Header appended = record.headers().lastHeader(APPENDED);
                    if (appended != null) {
                        long insertedMillis = Long.parseLong(new String(appended.value(), StandardCharsets.UTF_8));
                        latencies.add((record.timestamp() - insertedMillis) * 1_000_000L);
                    }
                }
            }
        }
        return latencies;
    }

    static double percentile(List<Long> sorted, double p) {
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        return sorted.get((int) Math.min(sorted.size() - 1, Math.round(p * (sorted.size() - 1)))) / 1e6;
    }
}
