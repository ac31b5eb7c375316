package dev.once.benchmarks.relay;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.idempotency.OnceMigrations;
import dev.once.relay.CdcRelay;
import dev.once.relay.CdcSettings;
import dev.once.relay.EventTransport;
import dev.once.relay.KafkaTransport;
import dev.once.relay.OutboxRelay;
import dev.once.relay.PollingRelay;
import dev.once.relay.RelayListener;
import dev.once.relay.RelayOptions;
import dev.once.relay.TopicRouter;
import dev.once.test.PostgresServer;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.test.TestPostgres;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Relay throughput and latency, with Kafka's own {@code ProducerPerformance} as the raw baseline, same broker, same
 * record size and acks, in the same run:
 * <ul>
 *   <li>drain: the relay is running, 100,000 rows of ~200-byte payload commit in one transaction, and the clock stops
 *       when none is pending (published, acknowledged and deleted);</li>
 *   <li>latency: rows commit one per transaction at a steady rate; the relay reports commit-to-acknowledgement
 *       latency for each, and p50/p99 are printed.</li>
 * </ul>
 * Options: {@code --rows 100000 --rate 2000 --seconds 10 --relays polling,cdc --workers 2}.
 */
public final class RelayBenchmark {

    private RelayBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int rows = 100_000;
        int rate = 2_000;
        int seconds = 10;
        List<String> relays = List.of("polling", "cdc");
        int workers = RelayOptions.WORKERS;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--rows" -> rows = Integer.parseInt(args[i + 1]);
                case "--rate" -> rate = Integer.parseInt(args[i + 1]);
                case "--seconds" -> seconds = Integer.parseInt(args[i + 1]);
                case "--relays" -> relays = List.of(args[i + 1].split(","));
                case "--workers" -> workers = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        PostgresServer server = TestPostgres.server();
        String bootstrap = TestKafka.bootstrapServers();
        System.out.printf(Locale.ROOT, "relay benchmark on %s, Kafka %s%n", server, bootstrap);
        String baselineTopic = "bench-raw-" + Long.toHexString(System.nanoTime());
        TestKafka.createTopic(baselineTopic, 4);
        System.out.println("\nraw baseline: org.apache.kafka.tools.ProducerPerformance, " + rows + " records of 200 bytes, acks=all");
        org.apache.kafka.tools.ProducerPerformance.main(new String[] {"--topic", baselineTopic, "--num-records",
                Integer.toString(rows), "--record-size", "200", "--throughput", "-1", "--producer-props",
                "bootstrap.servers=" + bootstrap, "acks=all", "enable.idempotence=true", "linger.ms=5"});
        for (String relay : relays) {
            run(server, bootstrap, relay, rows, rate, seconds, workers);
        }
    }

    private static void run(PostgresServer server, String bootstrap, String kind, int rows, int rate, int seconds,
                            int workers) throws Exception {
        String schema = "bench_relay_" + Long.toHexString(System.nanoTime());
        execute(server, "CREATE SCHEMA " + schema);
        String slot = schema.toLowerCase(Locale.ROOT);
        try (HikariDataSource ds = TestDatabase.newDataSource(schema, 8, null)) {
            OnceMigrations.migrate(ds);
            String prefix = "b" + Long.toHexString(System.nanoTime());
            TestKafka.createTopic(prefix + ".order", 4);
            ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
            RelayListener listener = new RelayListener() {
                @Override
                public void latency(Duration latency) {
                    latencies.add(latency.toNanos());
                }
            };
            EventTransport transport = new KafkaTransport(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
                    TopicRouter.byAggregateType(prefix), Duration.ofSeconds(30));
            RelayOptions options = RelayOptions.ofDefaults().withBatchSize(2_000).withWorkers(workers);
            OutboxRelay relay = kind.equals("cdc")
                    ? new CdcRelay("bench", ds, CdcSettings.of(server.jdbcUrl(), server.username(), server.password(), schema)
                            .withSlot(slot, slot), transport, options, listener)
                    : new PollingRelay("bench", ds, transport, options, listener);
            JdbcTemplate jdbc = new JdbcTemplate(ds);
            try (relay; transport) {
                relay.start();
                long start = System.nanoTime();
                jdbc.update("""
                        INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type,
                                                  event_version, payload)
                        SELECT gen_random_uuid(), 'acme', 'alice', 'order', 'o-' || (n % 1000), 'OrderPlaced', 1,
                               jsonb_build_object('n', n, 'note', repeat('x', 170))
                        FROM generate_series(1, ?) AS n ORDER BY n
                        """, rows);
                while (pending(jdbc) > 0) {
                    LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
                }
                double drain = rows / ((System.nanoTime() - start) / 1e9);
                System.out.printf(Locale.ROOT, "%n%s relay: drained %d rows at %.0f events/s%n", kind, rows, drain);

                latencies.clear();
                steady(jdbc, rate, seconds);
                while (pending(jdbc) > 0) {
                    LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
                }
                List<Long> sorted = new ArrayList<>(latencies);
                sorted.sort(Long::compare);
                System.out.printf(Locale.ROOT, "%s relay: commit->ack at %d events/s over %d s: p50 %.1f ms, p99 %.1f ms (%d samples)%n",
                        kind, rate, seconds, percentile(sorted, 0.50), percentile(sorted, 0.99), sorted.size());
            }
        } finally {
            if (kind.equals("cdc")) {
                try (Connection c = DriverManager.getConnection(server.jdbcUrl(), server.username(), server.password());
                     Statement s = c.createStatement()) {
                    for (int i = 0; i < 100; i++) {
                        try {
                            s.execute("SELECT pg_drop_replication_slot('" + slot + "') FROM pg_replication_slots"
                                    + " WHERE slot_name = '" + slot + "'");
                            break;
                        } catch (java.sql.SQLException stillActive) {
                            LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
                        }
                    }
                    s.execute("DROP PUBLICATION IF EXISTS " + slot);
                }
            }
            execute(server, "DROP SCHEMA " + schema + " CASCADE");
        }
    }

    /** Commits one row per transaction at {@code rate} per second for {@code seconds}, from two paced threads. */
    private static void steady(JdbcTemplate jdbc, int rate, int seconds) throws InterruptedException {
        int writers = 2;
        long intervalNanos = 1_000_000_000L * writers / rate;
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < writers; w++) {
            Thread t = new Thread(() -> {
                long next = System.nanoTime();
                int n = 0;
                while (next < end) {
                    jdbc.update("INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type,"
                            + " event_version, payload) VALUES (gen_random_uuid(), 'acme', 'alice', 'order', ?, 'OrderPlaced', 1,"
                            + " jsonb_build_object('n', ?, 'note', repeat('x', 170)))", "s-" + (n % 100), n);
                    n++;
                    next += intervalNanos;
                    long wait = next - System.nanoTime();
                    if (wait > 0) {
                        LockSupport.parkNanos(wait);
                    }
                }
            });
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
    }

    private static long pending(JdbcTemplate jdbc) {
        Long n = jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE published_at IS NULL AND parked_at IS NULL",
                Long.class);
        return n == null ? 0 : n;
    }

    private static double percentile(List<Long> sorted, double p) {
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        return sorted.get((int) Math.min(sorted.size() - 1, Math.round(p * (sorted.size() - 1)))) / 1e6;
    }

    private static void execute(PostgresServer server, String sql) throws Exception {
        try (Connection c = DriverManager.getConnection(server.jdbcUrl(), server.username(), server.password());
             Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
