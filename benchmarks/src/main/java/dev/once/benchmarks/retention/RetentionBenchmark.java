package dev.once.benchmarks.retention;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.dispatch.DispatchListener;
import dev.once.dispatch.EventDispatcher;
import dev.once.dispatch.HandlerRegistration;
import dev.once.dispatch.KafkaEventDispatcher;
import dev.once.guard.FailureMapper;
import dev.once.guard.GuardListener;
import dev.once.guard.GuardResult;
import dev.once.guard.IdempotencyMutationGuard;
import dev.once.guard.IdempotencyPolicy;
import dev.once.guard.MutationRequest;
import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.IdempotencyScope;
import dev.once.idempotency.IdempotencyStore;
import dev.once.idempotency.OnceMigrations;
import dev.once.idempotency.RequestFingerprint;
import dev.once.idempotency.Route;
import dev.once.idempotency.StoredResponse;
import dev.once.relay.KafkaTransport;
import dev.once.relay.PollingRelay;
import dev.once.relay.RelayListener;
import dev.once.relay.RelayOptions;
import dev.once.relay.TopicRouter;
import dev.once.retention.RetentionListener;
import dev.once.retention.RetentionOptions;
import dev.once.retention.RetentionRule;
import dev.once.retention.RetentionSweeper;
import dev.once.test.PostgresServer;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.test.TestPostgres;
import dev.once.wire.RecordSigning;
import dev.once.wire.WireFormat;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * The steady state of a service whose rows age out while it runs: guarded requests (the guard's claim, a handler that
 * appends one outbox event, the completion) from {@code --writers} threads, a polling relay that keeps published rows
 * for {@code --ttl} ({@code retention}), and a dispatcher whose TRANSACTIONAL handler takes a claim per event; request
 * records, handler claims and published rows all expire after {@code --ttl}. The same run is made without the
 * retention sweep and with it ({@code --interval}, {@code --grace}), each on a schema of its own; every 10 s it prints
 * the row counts and relation sizes of {@code idempotency_record} and {@code outbox_event}, how long the oldest due row
 * has waited, and the sweep's rows/s beside the claim rate. At the end: claims/s and p99 of a guarded request, events
 * handled/s, with and without the sweep. Options: {@code --requests 1000000 --writers 8 --ttl 30s --grace 10s
 * --interval 5s}.
 */
public final class RetentionBenchmark {

    private RetentionBenchmark() {
    }

    /** What one variant measured. */
    record Result(double claimsPerSecond, double p99Millis, double handledPerSecond) {
    }

    public static void main(String[] args) throws Exception {
        int requests = 1_000_000;
        int writers = 8;
        Duration ttl = Duration.ofSeconds(30);
        Duration grace = Duration.ofSeconds(10);
        Duration interval = Duration.ofSeconds(5);
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--requests" -> requests = Integer.parseInt(args[i + 1]);
                case "--writers" -> writers = Integer.parseInt(args[i + 1]);
                case "--ttl" -> ttl = Duration.parse("PT" + args[i + 1].toUpperCase(Locale.ROOT));
                case "--grace" -> grace = Duration.parse("PT" + args[i + 1].toUpperCase(Locale.ROOT));
                case "--interval" -> interval = Duration.parse("PT" + args[i + 1].toUpperCase(Locale.ROOT));
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        PostgresServer server = TestPostgres.server();
        String bootstrap = TestKafka.bootstrapServers();
        System.out.printf(Locale.ROOT, "retention benchmark: %d guarded requests from %d writers, each one event handled; "
                + "ttl %s, grace %s, sweep every %s; on %s, Kafka %s%n", requests, writers, ttl, grace, interval, server, bootstrap);
        String autovacuum = setting(server, "autovacuum");
        System.out.println("autovacuum: " + autovacuum + ("on".equals(autovacuum) ? ""
                : " - deleted rows' space is never reclaimed, so row counts can level off but relation sizes cannot;"
                        + " production servers vacuum (ALTER SYSTEM SET autovacuum = on; SELECT pg_reload_conf())"));
        Result off = run(server, bootstrap, false, requests, writers, ttl, grace, interval);
        Result on = run(server, bootstrap, true, requests, writers, ttl, grace, interval);
        System.out.printf(Locale.ROOT, "%n%-16s %12s %12s %14s%n", "sweeps", "claims/s", "p99 ms", "handled/s");
        System.out.printf(Locale.ROOT, "%-16s %12.0f %12.1f %14.0f%n", "off", off.claimsPerSecond(), off.p99Millis(), off.handledPerSecond());
        System.out.printf(Locale.ROOT, "%-16s %12.0f %12.1f %14.0f%n", "on", on.claimsPerSecond(), on.p99Millis(), on.handledPerSecond());
        System.out.printf(Locale.ROOT, "sweeps on / off: claims %.2fx, p99 %.2fx, handled %.2fx%n",
                on.claimsPerSecond() / off.claimsPerSecond(), on.p99Millis() / off.p99Millis(),
                on.handledPerSecond() / off.handledPerSecond());
    }

    private static Result run(PostgresServer server, String bootstrap, boolean sweeps, int requests, int writers,
                              Duration ttl, Duration grace, Duration interval) throws Exception {
        String schema = "bench_retention_" + Long.toHexString(System.nanoTime());
        execute(server, "CREATE SCHEMA " + schema);
        String topic = "bench-ret-" + Long.toHexString(System.nanoTime());
        TestKafka.createTopic(topic + ".order", 4);
        TestKafka.createTopic(topic + ".order" + WireFormat.DEAD_LETTER_SUFFIX, 1);
        System.out.printf(Locale.ROOT, "%nsweeps %s%n", sweeps ? "on" : "off");
        try (HikariDataSource ds = TestDatabase.newDataSource(schema, writers + 8, null)) {
            OnceMigrations.migrate(ds);
            JdbcTemplate jdbc = new JdbcTemplate(ds);
            jdbc.execute("CREATE TABLE effect (event_id uuid NOT NULL)");
            DataSourceTransactionManager transactions = new DataSourceTransactionManager(ds);
            IdempotencyStore store = IdempotencyStore.create(ds);
            IdempotencyMutationGuard guard = new IdempotencyMutationGuard(store, transactions, FailureMapper.INTERNAL_ERROR,
                    GuardListener.NONE);
            IdempotencyPolicy policy = IdempotencyPolicy.custom().lease(Duration.ofSeconds(5)).ttl(ttl).build();

            LongAdder handled = new LongAdder();
            EventDispatcher dispatcher = new EventDispatcher(dev.once.idempotency.HandlerClaimStore.create(ds), transactions, List.of(HandlerRegistration.transactional(
                    "OrderPlaced", 1, "projection", event -> jdbc.update("INSERT INTO effect VALUES (?)", event.eventId()))),
                    ClaimPolicy.custom().lease(Duration.ofSeconds(5)).ttl(ttl).build(), RecordSigning.off(), new DispatchListener() {
                        @Override
                        public void handled(String handlerKey, Duration elapsed) {
                            handled.increment();
                        }
                    });
            Map<String, AtomicLong> swept = new ConcurrentHashMap<>();
            Map<String, Duration> overdue = new ConcurrentHashMap<>();
            RetentionSweeper sweeper = new RetentionSweeper(ds, RetentionOptions.ofDefaults().withInterval(interval),
                    List.of(RetentionRule.idempotencyRecords(grace), RetentionRule.publishedOutboxEvents(ttl)),
                    new RetentionListener() {
                        @Override
                        public void swept(String table, int rows) {
                            swept.computeIfAbsent(table, t -> new AtomicLong()).addAndGet(rows);
                        }

                        @Override
                        public void overdue(String table, Duration age) {
                            overdue.put(table, age);
                        }
                    });
            try (KafkaTransport transport = new KafkaTransport(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
                    TopicRouter.byAggregateType(topic), Duration.ofSeconds(30), RecordSigning.off());
                 PollingRelay relay = new PollingRelay("bench", ds, transport, RelayOptions.ofDefaults().withRetention(ttl),
                         RelayListener.NONE);
                 KafkaEventDispatcher consumers = new KafkaEventDispatcher(bootstrap, "ret-" + schema, dispatcher, 2, 3,
                         topic + ".order");
                 sweeper) {
                relay.start();
                consumers.start();
                if (sweeps) {
                    sweeper.start();
                }
                AtomicLong claimed = new AtomicLong();
                LongAdder completed = new LongAdder();
                long[][] latencies = new long[writers][];
                List<Thread> threads = new ArrayList<>();
                long begin = System.nanoTime();
                for (int w = 0; w < writers; w++) {
                    int writer = w;
                    latencies[w] = new long[requests / writers + 1];
                    Thread t = new Thread(() -> {
                        Route route = Route.http("POST", "/orders");
                        int n = 0;
                        long next;
                        while ((next = claimed.getAndIncrement()) < requests) {
                            long seq = next;
                            String key = "k-" + writer + "-" + n;
                            IdempotencyScope scope = IdempotencyScope.of("acme", "u" + writer, route, key);
                            String hash = RequestFingerprint.of("POST", route, "/orders", "application/json",
                                    ("{\"n\":" + seq + "}").getBytes(java.nio.charset.StandardCharsets.UTF_8));
                            long start = System.nanoTime();
                            GuardResult result = guard.run(MutationRequest.of(scope, hash), policy, ctx -> {
                                ctx.append(ctx.event("order", "o-" + (seq % 1000), "OrderPlaced", 1)
                                        .payloadJson("{\"n\":" + seq + ",\"note\":\"" + "x".repeat(150) + "\"}").build());
                                return StoredResponse.of(201, "application/json", "{\"ok\":true}");
                            });
                            if (!(result instanceof GuardResult.Completed)) {
                                throw new IllegalStateException("unexpected " + result);
                            }
                            if (n < latencies[writer].length) {
                                latencies[writer][n] = System.nanoTime() - start;
                            }
                            n++;
                            completed.increment();
                        }
                    }, "writer-" + w);
                    t.start();
                    threads.add(t);
                }
                Sampler sampler = new Sampler(jdbc, completed, handled, swept, overdue, begin);
                long claimsDone = 0;
                while (handled.sum() < requests) {
                    if (claimsDone == 0 && threads.stream().noneMatch(Thread::isAlive)) {
                        claimsDone = System.nanoTime();
                    }
                    sampler.maybePrint();
                    LockSupport.parkNanos(Duration.ofMillis(200).toNanos());
                }
                for (Thread t : threads) {
                    t.join();
                }
                long end = System.nanoTime();
                claimsDone = claimsDone == 0 ? end : claimsDone;
                sampler.print();
                long[] all = Arrays.stream(latencies).flatMapToLong(Arrays::stream).filter(v -> v > 0).sorted().toArray();
                double p99 = all.length == 0 ? Double.NaN : all[(int) Math.min(all.length - 1, Math.round(0.99 * (all.length - 1)))] / 1e6;
                Result result = new Result(requests / ((claimsDone - begin) / 1e9), p99, requests / ((end - begin) / 1e9));
                System.out.printf(Locale.ROOT, "sweeps %s: %.0f guarded requests/s (p99 %.1f ms), %.0f events handled/s%n",
                        sweeps ? "on" : "off", result.claimsPerSecond(), result.p99Millis(), result.handledPerSecond());
                return result;
            }
        } finally {
            execute(server, "DROP SCHEMA " + schema + " CASCADE");
        }
    }

    /** Prints the tables' rows and sizes, the oldest due row's wait and the rates, every 10 s. */
    private static final class Sampler {

        private final JdbcTemplate jdbc;
        private final LongAdder claimed;
        private final LongAdder handled;
        private final Map<String, AtomicLong> swept;
        private final Map<String, Duration> overdue;
        private final long begin;
        private long next;
        private long lastAt;
        private long lastClaimed;
        private long lastSwept;

        Sampler(JdbcTemplate jdbc, LongAdder claimed, LongAdder handled, Map<String, AtomicLong> swept,
                Map<String, Duration> overdue, long begin) {
            this.jdbc = jdbc;
            this.claimed = claimed;
            this.handled = handled;
            this.swept = swept;
            this.overdue = overdue;
            this.begin = begin;
            this.next = begin + 10_000_000_000L;
            this.lastAt = begin;
        }

        void maybePrint() {
            if (System.nanoTime() >= next) {
                print();
                next += 10_000_000_000L;
            }
        }

        void print() {
            long now = System.nanoTime();
            long claims = claimed.sum();
            long sweptNow = swept.values().stream().mapToLong(AtomicLong::get).sum();
            double seconds = (now - lastAt) / 1e9;
            Map<String, Object> sizes = jdbc.queryForMap("""
                    SELECT (SELECT count(*) FROM idempotency_record) AS records,
                           pg_total_relation_size('idempotency_record') AS records_bytes,
                           (SELECT count(*) FROM outbox_event) AS events,
                           pg_total_relation_size('outbox_event') AS events_bytes
                    """);
            System.out.printf(Locale.ROOT, "  t=%4ds claimed=%8d handled=%8d | idempotency_record %8d rows %6.1f MiB, "
                            + "outbox_event %8d rows %6.1f MiB | oldest due: records %5.1f s, outbox %5.1f s | "
                            + "claims %6.0f/s, swept %6.0f rows/s%n",
                    (now - begin) / 1_000_000_000L, claims, handled.sum(),
                    ((Number) sizes.get("records")).longValue(), ((Number) sizes.get("records_bytes")).longValue() / 1048576.0,
                    ((Number) sizes.get("events")).longValue(), ((Number) sizes.get("events_bytes")).longValue() / 1048576.0,
                    overdue.getOrDefault("idempotency_record", Duration.ZERO).toMillis() / 1000.0,
                    overdue.getOrDefault("outbox_event", Duration.ZERO).toMillis() / 1000.0,
                    (claims - lastClaimed) / seconds, (sweptNow - lastSwept) / seconds);
            lastAt = now;
            lastClaimed = claims;
            lastSwept = sweptNow;
        }
    }

    private static String setting(PostgresServer server, String name) throws Exception {
        try (Connection c = DriverManager.getConnection(server.jdbcUrl(), server.username(), server.password());
             Statement s = c.createStatement();
             java.sql.ResultSet rs = s.executeQuery("SELECT current_setting('" + name + "')")) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static void execute(PostgresServer server, String sql) throws Exception {
        try (Connection c = DriverManager.getConnection(server.jdbcUrl(), server.username(), server.password());
             Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
