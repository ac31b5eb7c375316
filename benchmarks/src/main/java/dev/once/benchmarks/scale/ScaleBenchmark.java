package dev.once.benchmarks.scale;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.benchmarks.Harness;
import dev.once.idempotency.ClaimPartitions;
import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.HandlerClaimStore;
import dev.once.idempotency.IdempotencyScope;
import dev.once.idempotency.OnceMigrations;
import dev.once.idempotency.Route;
import dev.once.outbox.UuidV7;
import dev.once.test.PostgresServer;
import dev.once.test.TestDatabase;
import dev.once.test.TestPostgres;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Handler claims at scale (issue [4/6]): the dispatcher's claim table {@code once_handler_claim}, range-partitioned by
 * the day of each event's UUIDv7 time, prefilled in steps to each of {@code --rows} (e.g. {@code 0,10000000}) claims
 * spread over {@code --days} days, against the same claims in {@code idempotency_record}, where they were kept before
 * (the baseline, at steps up to {@code --baseline-max} rows). At each step, from the same run:
 * <ul>
 *   <li>bytes per claim row, indexes included ({@code pg_total_relation_size} over the rows);</li>
 *   <li>fresh claims/s at each of {@code --threads}, each claim its own transaction (BEGIN, the claim, COMMIT), as a
 *       TRANSACTIONAL handler's one-write claim: {@code HandlerClaimStore.claimCompleted}, the raw {@code INSERT} of
 *       the same row (the floor) and the baseline's one-write claim, in alternating rounds;</li>
 *   <li>p99 of those claims (at the highest thread count) while the oldest day is detached and dropped, against the
 *       same window without it;</li>
 *   <li>retention's cost per claim: the baseline's {@code DELETE} of the oldest day's claims against
 *       {@code ClaimPartitions} dropping that day.</li>
 * </ul>
 * Options: {@code --rows 0,1000000 --days 7 --threads 1,16 --seconds 5 --rounds 3 --baseline-max 10000000}. Not part
 * of CI. It leaves nothing behind: the schema is dropped at the end.
 */
public final class ScaleBenchmark {

    /** A handler claim's route as the dispatcher writes it: {@code <event_type>:v<version>:<handler_key>}. */
    private static final String ROUTE = "AccountCreated:v1:welcome-mail";
    private static final long DAY = 86_400_000L;

    /** The baseline's one-write claim (BatchClaims.INSERT_COMPLETED_BATCH, one row). */
    private static final String CLAIM_BASELINE = """
            INSERT INTO idempotency_record (tenant_id, user_id, route, idempotency_key, request_hash, status,
                                            response_code, expires_at)
            VALUES ('acme', 'svc-orders', ?, ?, ?, 'succeeded', 200, statement_timestamp() + interval '7 days')
            ON CONFLICT ON CONSTRAINT idempotency_record_scope_uk DO NOTHING
            RETURNING id
            """;

    /** The floor: the same row as the store writes, with its day computed in Java. */
    private static final String CLAIM_RAW = """
            INSERT INTO once_handler_claim (route_id, day, event_id, status, tenant_id, actor_id, payload_hash)
            VALUES (1, ?, ?, 2, 'acme', 'svc-orders', ?)
            ON CONFLICT DO NOTHING
            RETURNING day
            """;

    private ScaleBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        List<Long> steps = List.of(0L, 1_000_000L);
        int days = 7;
        List<Integer> threads = List.of(1, 16);
        long millis = 5_000;
        int rounds = 3;
        long baselineMax = 10_000_000;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--rows" -> steps = java.util.Arrays.stream(args[i + 1].split(",")).map(Long::parseLong).sorted().toList();
                case "--days" -> days = Integer.parseInt(args[i + 1]);
                case "--threads" -> threads = java.util.Arrays.stream(args[i + 1].split(",")).map(Integer::parseInt).toList();
                case "--seconds" -> millis = Long.parseLong(args[i + 1]) * 1000;
                case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
                case "--baseline-max" -> baselineMax = Long.parseLong(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        PostgresServer server = TestPostgres.server();
        String schema = "bench_scale_" + Long.toHexString(System.nanoTime());
        execute(server, "CREATE SCHEMA " + schema);
        int maxThreads = threads.stream().mapToInt(Integer::intValue).max().orElse(1);
        try (HikariDataSource ds = TestDatabase.newDataSource(schema, maxThreads + 4, null)) {
            System.out.printf(Locale.ROOT, "scale benchmark on %s: steps %s claim rows over %d days%n", server, steps, days);
            OnceMigrations.migrate(ds);
            long filled = 0;
            for (long rows : steps) {
                boolean baseline = rows <= baselineMax;
                long t0 = System.nanoTime();
                prefill(ds, filled, rows, days, baseline);
                filled = rows;
                System.out.printf(Locale.ROOT, "%n=== %,d claim rows (prefilled in %.0f s)%s%n", rows,
                        (System.nanoTime() - t0) / 1e9, baseline ? "" : ", no baseline at this size");
                step(ds, rows, days, threads, millis, rounds, baseline);
            }
        } finally {
            execute(server, "DROP SCHEMA " + schema + " CASCADE");
        }
    }

    private static void step(HikariDataSource ds, long rows, int days, List<Integer> threads, long millis, int rounds,
                             boolean baseline) throws Exception {
        JdbcTemplate jdbc = new JdbcTemplate(ds);
        jdbc.execute("VACUUM ANALYZE idempotency_record");
        jdbc.execute("VACUUM ANALYZE once_handler_claim");
        if (rows > 0) {
            long claimBytes = jdbc.queryForObject("SELECT sum(pg_total_relation_size(relid)) FROM "
                    + "pg_partition_tree('once_handler_claim')", Long.class);
            long claimRows = jdbc.queryForObject("SELECT count(*) FROM once_handler_claim", Long.class);
            System.out.println("bytes per claim row, indexes included");
            System.out.printf(Locale.ROOT, "  %-46s %10.0f (%,d rows)%n", "once_handler_claim", (double) claimBytes / claimRows,
                    claimRows);
            if (baseline) {
                long recordBytes = jdbc.queryForObject("SELECT pg_total_relation_size('idempotency_record')", Long.class);
                long recordRows = jdbc.queryForObject("SELECT count(*) FROM idempotency_record", Long.class);
                System.out.printf(Locale.ROOT, "  %-46s %10.0f%n", "idempotency_record (baseline)",
                        (double) recordBytes / recordRows);
            }
        }
        HandlerClaimStore store = HandlerClaimStore.create(ds);
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
        ClaimPolicy policy = ClaimPolicy.custom().lease(Duration.ofSeconds(30)).ttl(Duration.ofDays(days + 1L)).build();
        Route route = Route.of(ROUTE);
        Map<String, Harness.Operation> operations = new LinkedHashMap<>();
        operations.put("HandlerClaimStore.claimCompleted", (t, seq) -> claim(store, tx, route, policy));
        operations.put("raw INSERT into once_handler_claim", (t, seq) -> tx.executeWithoutResult(s -> {
            UUID event = UuidV7.next();
            jdbc.queryForList(CLAIM_RAW, (int) ((event.getMostSignificantBits() >>> 16) / DAY), event, hash(seq));
        }));
        if (baseline) {
            String run = Long.toHexString(System.nanoTime());
            operations.put("idempotency_record (baseline)", (t, seq) -> tx.executeWithoutResult(s -> jdbc.queryForList(
                    CLAIM_BASELINE, ROUTE, UuidV7.next().toString(), "v1:" + run + seq)));
        }
        for (int n : threads) {
            Map<String, Double> result = Harness.compare(operations, new ArrayList<>(operations.keySet()), n, millis, rounds);
            print("fresh claims/s, " + n + " thread" + (n == 1 ? "" : "s"), result, "raw INSERT into once_handler_claim");
        }
        if (rows == 0) {
            return;
        }
        // retention: the oldest day alone is due
        long now = jdbc.queryForObject("SELECT CAST(EXTRACT(EPOCH FROM statement_timestamp()) * 1000 AS bigint)", Long.class);
        int oldest = (int) (now / DAY) - days;
        Duration retention = Duration.ofMillis(now - (oldest + 1L) * DAY - 60_000);
        ClaimPartitions partitions = ClaimPartitions.create(ds, ClaimPartitions.Options.ofDefaults().withRetention(retention));
        long dayRows = jdbc.queryForObject("SELECT count(*) FROM once_handler_claim WHERE day = ?", Long.class,
                oldest);
        int n = threads.stream().mapToInt(Integer::intValue).max().orElse(1);
        Latencies quiet = latencies(n, millis, () -> claim(store, tx, route, policy), null);
        long[] dropNanos = new long[1];
        Latencies dropping = latencies(n, millis, () -> claim(store, tx, route, policy), () -> {
            long t0 = System.nanoTime();
            ClaimPartitions.Round round = partitions.maintain();
            dropNanos[0] = System.nanoTime() - t0;
            if (!round.dropped().contains(oldest)) {
                throw new IllegalStateException("the oldest day was not dropped: " + round);
            }
        });
        System.out.println();
        System.out.printf(Locale.ROOT, "claims while the oldest day (%,d rows) is detached and dropped, %d threads%n", dayRows, n);
        System.out.printf(Locale.ROOT, "  %-46s %10.0f claims/s, p50 %6.2f ms, p99 %6.2f ms, max %7.2f ms%n", "without",
                quiet.rate(), quiet.p(0.50), quiet.p(0.99), quiet.p(1.0));
        System.out.printf(Locale.ROOT, "  %-46s %10.0f claims/s, p50 %6.2f ms, p99 %6.2f ms, max %7.2f ms (p99 %.2fx)%n",
                "while dropping", dropping.rate(), dropping.p(0.50), dropping.p(0.99), dropping.p(1.0),
                dropping.p(0.99) / quiet.p(0.99));
        System.out.println();
        System.out.println("retention of the oldest day's claims");
        System.out.printf(Locale.ROOT, "  %-46s %,10d rows in %7.2f s: %8.2f us per claim%n",
                "ClaimPartitions: DETACH CONCURRENTLY + DROP", dayRows, dropNanos[0] / 1e9, dropNanos[0] / 1e3 / Math.max(1, dayRows));
        if (baseline) {
            java.sql.Timestamp dayEnd = new java.sql.Timestamp((oldest + 1L) * DAY);
            long deleteStart = System.nanoTime();
            int deleted = jdbc.update("DELETE FROM idempotency_record WHERE claimed_at < ?", dayEnd);
            double deleteSeconds = (System.nanoTime() - deleteStart) / 1e9;
            System.out.printf(Locale.ROOT, "  %-46s %,10d rows in %7.2f s: %8.2f us per claim, then vacuum%n",
                    "DELETE from idempotency_record (baseline)", deleted, deleteSeconds, deleteSeconds * 1e6 / Math.max(1, deleted));
        }
    }

    private static void claim(HandlerClaimStore store, TransactionTemplate tx, Route route, ClaimPolicy policy) {
        IdempotencyScope scope = IdempotencyScope.of("acme", "svc-orders", route, UuidV7.next().toString());
        boolean[] fresh = tx.execute(s -> store.claimCompleted(List.of(scope), List.of("v1:" + scope.key().value()), policy));
        if (!fresh[0]) {
            throw new IllegalStateException("a fresh event was not claimed fresh");
        }
    }

    /** Latencies of {@code op} on {@code threads} threads for {@code millis}; {@code during} runs once, half-way. */
    private static Latencies latencies(int threads, long millis, Runnable op, Runnable during) throws Exception {
        java.util.concurrent.atomic.AtomicBoolean running = new java.util.concurrent.atomic.AtomicBoolean(true);
        List<long[]> perThread = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(() -> {
                long[] samples = new long[1 << 20];
                int count = 0;
                try {
                    while (running.get() && count < samples.length) {
                        long t0 = System.nanoTime();
                        op.run();
                        samples[count++] = System.nanoTime() - t0;
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
                perThread.add(java.util.Arrays.copyOf(samples, count));
            });
            worker.start();
            workers.add(worker);
        }
        long begin = System.nanoTime();
        Thread.sleep(millis / 2); // the measurement window itself
        if (during != null) {
            during.run();
        }
        Thread.sleep(millis / 2);
        running.set(false);
        for (Thread worker : workers) {
            worker.join();
        }
        double seconds = (System.nanoTime() - begin) / 1e9;
        if (!errors.isEmpty()) {
            throw new IllegalStateException("a claim failed", errors.get(0));
        }
        long[] all = perThread.stream().flatMapToLong(java.util.Arrays::stream).sorted().toArray();
        return new Latencies(all, all.length / seconds);
    }

    private record Latencies(long[] sorted, double rate) {
        double p(double q) {
            return sorted.length == 0 ? Double.NaN : sorted[Math.min(sorted.length - 1, (int) Math.ceil(q * sorted.length) - 1 < 0 ? 0
                    : (int) Math.ceil(q * sorted.length) - 1)] / 1e6;
        }
    }

    /** Claims {@code from} to {@code to}, event ids spread evenly over the days, in batches of a million. */
    private static void prefill(HikariDataSource ds, long from, long to, int days, boolean baseline) {
        JdbcTemplate jdbc = new JdbcTemplate(ds);
        jdbc.update("INSERT INTO once_handler_route (route) VALUES (?) ON CONFLICT DO NOTHING", ROUTE);
        long now = jdbc.queryForObject("SELECT CAST(EXTRACT(EPOCH FROM statement_timestamp()) * 1000 AS bigint)", Long.class);
        long start = (now / DAY - days) * DAY;
        long span = days * DAY;
        ClaimPartitions partitions = ClaimPartitions.create(ds, ClaimPartitions.Options.ofDefaults()
                .withRetention(Duration.ofDays(days + 1L)));
        partitions.maintain();
        for (long day = start / DAY; day <= now / DAY; day++) {
            String name = "once_handler_claim_" + java.time.LocalDate.ofEpochDay(day).toString().replace("-", "");
            jdbc.execute("CREATE TABLE IF NOT EXISTS " + name + " PARTITION OF once_handler_claim FOR VALUES FROM (" + day
                    + ") TO (" + (day + 1) + ")");
        }
        long batch = 1_000_000;
        for (long lo = from; lo < to; lo += batch) {
            long hi = Math.min(to, lo + batch);
            // claim i of a step of `to` claims at start + i * span / to: each step in time order, as events arrive, over
            // the same days (a later step's claims fall between an earlier one's)
            String ids = """
                    SELECT i, CAST(lpad(to_hex(ms), 12, '0') || '7' || substr(md5(i::text), 1, 3)
                                   || '8' || substr(md5(i::text), 4, 15) AS uuid) AS event_id, ms
                    FROM (SELECT i, %d + i * %d / %d AS ms FROM generate_series(CAST(%d AS bigint), %d) AS i) AS g
                    """.formatted(start, span, to, lo, hi - 1);
            jdbc.execute("""
                    INSERT INTO once_handler_claim (route_id, day, event_id, status, tenant_id, actor_id, payload_hash)
                    SELECT 1, CAST(ms / 86400000 AS integer), event_id, 2, 'acme', 'svc-orders',
                           substring(decode(md5(i::text), 'hex') FROM 1 FOR 16)
                    FROM (%s) AS ids
                    """.formatted(ids));
            if (baseline) {
                jdbc.execute("""
                        INSERT INTO idempotency_record (tenant_id, user_id, route, idempotency_key, request_hash, status,
                                                        response_code, expires_at, claimed_at, created_at, updated_at)
                        SELECT 'acme', 'svc-orders', '%s', event_id::text, 'v1:' || md5(i::text) || md5(event_id::text),
                               'succeeded', 200, to_timestamp(ms / 1000.0) + interval '7 days', to_timestamp(ms / 1000.0),
                               to_timestamp(ms / 1000.0), to_timestamp(ms / 1000.0)
                        FROM (%s) AS ids
                        """.formatted(ROUTE, ids));
            }
        }
    }

    private static byte[] hash(long seq) {
        byte[] hash = new byte[16];
        java.nio.ByteBuffer.wrap(hash).putLong(seq).putLong(System.nanoTime());
        return hash;
    }

    private static void print(String title, Map<String, Double> result, String baseline) {
        System.out.println();
        System.out.println(title);
        double base = result.get(baseline);
        result.forEach((name, ops) -> System.out.printf(Locale.ROOT, "  %-46s %10.0f %7.2fx%n", name, ops, ops / base));
    }

    private static void execute(PostgresServer server, String sql) throws Exception {
        try (Connection c = DriverManager.getConnection(server.jdbcUrl(), server.username(), server.password());
             Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
