package dev.once.benchmarks.retention;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.ClaimResult;
import dev.once.idempotency.IdempotencyScope;
import dev.once.idempotency.IdempotencyStore;
import dev.once.idempotency.OnceMigrations;
import dev.once.idempotency.RequestFingerprint;
import dev.once.idempotency.Route;
import dev.once.idempotency.StoredResponse;
import dev.once.idempotency.TransitionResult;
import dev.once.retention.RetentionListener;
import dev.once.retention.RetentionOptions;
import dev.once.retention.RetentionRule;
import dev.once.retention.RetentionSweeper;
import dev.once.test.PostgresServer;
import dev.once.test.TestDatabase;
import dev.once.test.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Does the retention sweep of HTTP idempotency records keep up (issue [4/6])? {@code idempotency_record} is
 * prefilled with {@code --rows} records, a share {@code --due} of them past {@code expires_at} and the grace, the rest
 * live. Then, in ABBA-alternating windows of {@code --seconds}, {@code --rounds} of each:
 * <ul>
 *   <li><b>writers</b>: {@code --writers} threads make guarded requests at full speed, each a fresh key, as the guard
 *       does on the store: {@code IdempotencyStore.claim} outside a transaction (it commits asynchronously), then
 *       {@code markSucceeded} with a 201 in a transaction of its own;</li>
 *   <li><b>writers+sweep</b>: the same, with {@link RetentionSweeper} ({@link RetentionRule#idempotencyRecords} with
 *       {@link RetentionRule#GRACE}, its real statement, batch size and pause between batches) called in a loop on a
 *       thread of its own;</li>
 *   <li><b>sweep</b>: the sweep alone.</li>
 * </ul>
 * Before every window the due rows are topped up to the due share (the rows the windows before swept, added anew,
 * newer than the rows still due, as time makes records due), and {@code VACUUM} stands in for autovacuum, so that
 * every window starts from the same table; a window whose sweep found nothing more due says {@code RAN DRY}.
 * Options: {@code --rows 10000000 --due 0.5 --writers 16 --seconds 20 --rounds 3 --batch 1000 --pause-ms 20
 * --no-vacuum}. Not part of CI; the schema is dropped at the end.
 */
public final class RecordSweepBenchmark {

    static final String BENCH = "record-sweep";
    static final String WRITERS = "writers";
    static final String BOTH = "writers+sweep";
    static final String SWEEP = "sweep";

    /** How far apart due records expire: their expiry runs on from one top-up to the next, oldest first. */
    private static final long DUE_STEP_MICROS = 10;
    private static final Duration TTL = Duration.ofHours(24);
    private static final Route ROUTE = Route.http("POST", "/orders");

    private RecordSweepBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        long rows = 10_000_000;
        double dueShare = 0.5;
        int writers = 16;
        long millis = 20_000;
        int rounds = 3;
        RetentionOptions options = RetentionOptions.ofDefaults();
        int batch = options.batchSize();
        long pauseMillis = options.pause().toMillis();
        boolean vacuum = true;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rows" -> rows = Long.parseLong(args[++i]);
                case "--due" -> dueShare = Double.parseDouble(args[++i]);
                case "--writers" -> writers = Integer.parseInt(args[++i]);
                case "--seconds" -> millis = Long.parseLong(args[++i]) * 1000;
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--batch" -> batch = Integer.parseInt(args[++i]);
                case "--pause-ms" -> pauseMillis = Long.parseLong(args[++i]);
                case "--no-vacuum" -> vacuum = false;
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        options = options.withBatch(batch, Duration.ofMillis(pauseMillis));
        long dueTarget = Math.round(rows * dueShare);
        PostgresServer server = TestPostgres.server();
        String schema = "bench_record_sweep_" + Long.toHexString(System.nanoTime());
        execute(server, "CREATE SCHEMA " + schema);
        try (HikariDataSource ds = TestDatabase.newDataSource(schema, writers + 4, null)) {
            OnceMigrations.migrate(ds);
            JdbcTemplate jdbc = new JdbcTemplate(ds);
            System.out.printf(Locale.ROOT, "%s on %s: %,d records, %,d due (past expires_at + grace %s), %d writers, "
                            + "%d x %d s windows of each, sweep batch %d, pause %d ms, autovacuum %s, %s%n", BENCH, server,
                    rows, dueTarget, RetentionRule.GRACE, writers, rounds, millis / 1000, options.batchSize(), pauseMillis,
                    jdbc.queryForObject("SELECT current_setting('autovacuum')", String.class),
                    vacuum ? "VACUUM before every window" : "no VACUUM between windows");
            Prefill prefill = new Prefill(jdbc, ROUTE, RequestFingerprint.of("POST", ROUTE, "/orders", "application/json",
                    "{}".getBytes(StandardCharsets.UTF_8)));
            long t0 = System.nanoTime();
            prefill.due(dueTarget);
            prefill.live(rows - dueTarget);
            jdbc.execute("VACUUM ANALYZE idempotency_record");
            System.out.printf(Locale.ROOT, "%s prefill %,d rows in %.0f s, %.0f MiB with indexes%n", BENCH, rows,
                    (System.nanoTime() - t0) / 1e9,
                    jdbc.queryForObject("SELECT pg_total_relation_size('idempotency_record')", Long.class) / 1048576.0);

            IdempotencyStore store = IdempotencyStore.create(ds);
            TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
            ClaimPolicy policy = ClaimPolicy.custom().lease(Duration.ofSeconds(30)).ttl(TTL).build();
            StoredResponse response = StoredResponse.of(201, "application/json", "{\"id\":\"o-1\",\"status\":\"placed\"}");
            String run = Long.toHexString(System.nanoTime());
            AtomicLong windowNumber = new AtomicLong();
            LoadWindow.Request request = (thread, seq) -> {
                IdempotencyScope scope = IdempotencyScope.of("acme", "u" + thread, ROUTE,
                        "k-" + run + "-" + windowNumber.get() + "-" + thread + "-" + seq);
                String hash = RequestFingerprint.of("POST", ROUTE, "/orders", "application/json",
                        ("{\"n\":" + seq + ",\"thread\":" + thread + "}").getBytes(StandardCharsets.UTF_8));
                ClaimResult claim = store.claim(scope, hash, policy);
                if (!(claim instanceof ClaimResult.Claimed claimed) || claimed.kind() != ClaimResult.Claimed.Kind.FRESH) {
                    throw new IllegalStateException("a fresh key was not claimed fresh: " + claim);
                }
                TransitionResult done = tx.execute(s -> store.markSucceeded(claimed.token(), response));
                if (done != TransitionResult.APPLIED) {
                    throw new IllegalStateException("markSucceeded: " + done);
                }
            };
            RetentionOptions sweepOptions = options;
            AtomicLong sweptSinceTopUp = new AtomicLong();

            List<String> kinds = List.of(WRITERS, BOTH, SWEEP);
            List<String> order = new ArrayList<>(List.of(BOTH)); // a warm-up window first, not counted
            order.addAll(LoadWindow.abba(kinds, rounds));
            Map<String, List<LoadWindow.Result>> results = new LinkedHashMap<>();
            kinds.forEach(k -> results.put(k, new ArrayList<>()));
            for (int w = 0; w < order.size(); w++) {
                String kind = order.get(w);
                long topUp = sweptSinceTopUp.getAndSet(0);
                long prep = System.nanoTime();
                prefill.due(topUp);
                if (vacuum) {
                    jdbc.execute("VACUUM idempotency_record");
                }
                double prepSeconds = (System.nanoTime() - prep) / 1e9;
                windowNumber.set(w);
                LoadWindow.Sweep sweep = kind.equals(WRITERS) ? null : new RecordSweep(ds, sweepOptions);
                LoadWindow.Result r = LoadWindow.run(kind, writers, kind.equals(SWEEP) ? null : request, sweep, millis);
                if (r.sweeps()) {
                    sweptSinceTopUp.addAndGet(r.swept());
                }
                String line = LoadWindow.line(BENCH, "req", w, r);
                System.out.println((w == 0 ? line.replace(" window  0 ", " warm-up   ") : line)
                        + String.format(Locale.ROOT, " [topped up %,d due, prep %.1f s]", topUp, prepSeconds));
                if (w > 0) {
                    results.get(kind).add(r);
                }
            }
            summary(results);
        } finally {
            execute(server, "DROP SCHEMA " + schema + " CASCADE");
        }
    }

    private static void summary(Map<String, List<LoadWindow.Result>> results) {
        double wRate = LoadWindow.median(results.get(WRITERS).stream().map(LoadWindow.Result::requestsPerSecond).toList());
        double wP50 = LoadWindow.median(results.get(WRITERS).stream().map(r -> r.p(0.50)).toList());
        double wP99 = LoadWindow.median(results.get(WRITERS).stream().map(r -> r.p(0.99)).toList());
        double bRate = LoadWindow.median(results.get(BOTH).stream().map(LoadWindow.Result::requestsPerSecond).toList());
        double bP50 = LoadWindow.median(results.get(BOTH).stream().map(r -> r.p(0.50)).toList());
        double bP99 = LoadWindow.median(results.get(BOTH).stream().map(r -> r.p(0.99)).toList());
        double bSwept = LoadWindow.median(results.get(BOTH).stream().map(LoadWindow.Result::sweptPerSecond).toList());
        double sSwept = LoadWindow.median(results.get(SWEEP).stream().map(LoadWindow.Result::sweptPerSecond).toList());
        boolean dry = results.values().stream().flatMap(List::stream).anyMatch(r -> r.dryCalls() > 0);
        int n = results.get(WRITERS).size();
        System.out.printf(Locale.ROOT, "%s medians of %d windows each%s%n", BENCH, n,
                dry ? " (SOME WINDOWS RAN DRY: sweeps rated up to then, writers overlapped them only partly; raise --rows or --due)" : "");
        System.out.printf(Locale.ROOT, "%s (a) writers alone       %8.0f req/s  p50 %6.2f ms  p99 %7.2f ms%n", BENCH, wRate,
                wP50, wP99);
        System.out.printf(Locale.ROOT, "%s (b) writers + sweep     %8.0f req/s  p50 %6.2f ms  p99 %7.2f ms  "
                + "(rate %.2fx, p50 %.2fx, p99 %.2fx of (a))%n", BENCH, bRate, bP50, bP99, bRate / wRate, bP50 / wP50, bP99 / wP99);
        System.out.printf(Locale.ROOT, "%s (b) sweep during writes %8.0f rows/s = %.2fx the write rate beside it (b), "
                + "%.2fx (a)%n", BENCH, bSwept, bSwept / bRate, bSwept / wRate);
        System.out.printf(Locale.ROOT, "%s (c) sweep alone         %8.0f rows/s = %.2fx the write rate alone (a)%n", BENCH,
                sSwept, sSwept / wRate);
        System.out.printf(Locale.ROOT, "%s sweep >= 2x writes: while writing %s (%.2fx), alone %s (%.2fx)%n", BENCH,
                bSwept >= 2 * bRate ? "yes" : "NO", bSwept / bRate, sSwept >= 2 * wRate ? "yes" : "NO", sSwept / wRate);
    }

    /** The real sweeper, one per window (closing it is how a sweep under way is made to stop). */
    private static final class RecordSweep implements LoadWindow.Sweep {

        private final AtomicLong rows = new AtomicLong();
        private final RetentionSweeper sweeper;

        RecordSweep(HikariDataSource ds, RetentionOptions options) {
            this.sweeper = new RetentionSweeper(ds, options, List.of(RetentionRule.idempotencyRecords(RetentionRule.GRACE)),
                    new RetentionListener() {
                        @Override
                        public void swept(String table, int n) {
                            rows.addAndGet(n);
                        }
                    });
        }

        @Override
        public long sweepOnce() {
            Long n = sweeper.sweep().get("idempotency_record");
            if (n == null) {
                throw new IllegalStateException("the sweep failed: " + sweeper.status());
            }
            return n;
        }

        @Override
        public void stop() {
            sweeper.close();
        }

        @Override
        public long progress() {
            return rows.get();
        }
    }

    /**
     * Records as the guard leaves them (succeeded, a 201 with a small JSON body), written with generate_series. Due
     * records expire {@link #DUE_STEP_MICROS} apart, each top-up after the ones before, all at least a day past
     * {@code expires_at} + grace; live ones expire over the next {@link #TTL}.
     */
    private static final class Prefill {

        private static final long BATCH = 1_000_000;
        private final JdbcTemplate jdbc;
        private final Route route;
        private final String hashPrefix;
        private final int hashLength;
        private final long dueStartMillis;
        private long dueNext;
        private long liveNext;

        Prefill(JdbcTemplate jdbc, Route route, String sampleHash) {
            this.jdbc = jdbc;
            this.route = route;
            int colon = sampleHash.indexOf(':');
            this.hashPrefix = colon < 0 ? "" : sampleHash.substring(0, colon + 1);
            this.hashLength = sampleHash.length();
            long now = jdbc.queryForObject("SELECT CAST(EXTRACT(EPOCH FROM statement_timestamp()) * 1000 AS bigint)", Long.class);
            // due rows expire from 8 days ago: room for 60 billion of them before they reach 1 day past the grace
            this.dueStartMillis = now - RetentionRule.GRACE.toMillis() - Duration.ofDays(8).toMillis();
        }

        void due(long count) {
            insert(count, true);
        }

        void live(long count) {
            insert(count, false);
        }

        private void insert(long count, boolean due) {
            long first = due ? dueNext : liveNext;
            long liveCount = count;
            for (long lo = first; lo < first + count; lo += BATCH) {
                long hi = Math.min(first + count, lo + BATCH);
                String expires = due
                        ? "to_timestamp((%d + i * %d / 1000.0) / 1000.0)".formatted(dueStartMillis, DUE_STEP_MICROS)
                        : "statement_timestamp() + interval '1 minute' + (i - %d) * (%d / %d.0) * interval '1 millisecond'"
                                .formatted(first, TTL.toMillis(), Math.max(1, liveCount));
                jdbc.execute("""
                        INSERT INTO idempotency_record (tenant_id, user_id, route, idempotency_key, request_hash, status,
                                                        response_code, response_content_type, response_body, expires_at,
                                                        claimed_at, created_at, updated_at)
                        SELECT 'acme', 'u' || (i %% 16), '%s', '%s-' || i, left('%s' || md5(i::text) || md5((-i)::text)
                                   || md5((i + 1)::text), %d),
                               'succeeded', 201, 'application/json',
                               convert_to('{"id":"o-' || i || '","status":"placed"}', 'UTF8'), e, e - interval '%d ms',
                               e - interval '%d ms', e - interval '%d ms'
                        FROM (SELECT i, %s AS e FROM generate_series(CAST(%d AS bigint), %d) AS i) AS g
                        """.formatted(route.value(), due ? "due" : "live", hashPrefix, hashLength, TTL.toMillis(),
                        TTL.toMillis(), TTL.toMillis(), expires, lo, hi - 1));
            }
            if (due) {
                dueNext += count;
            } else {
                liveNext += count;
            }
        }
    }

    private static void execute(PostgresServer server, String sql) throws Exception {
        try (Connection c = DriverManager.getConnection(server.jdbcUrl(), server.username(), server.password());
             Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
