package dev.once.benchmarks.retention;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.idempotency.OnceMigrations;
import dev.once.outbox.OutboxEvent;
import dev.once.outbox.OutboxWriter;
import dev.once.spi.SlotWatermarks;
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
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Does the outbox's delete keep up at twice the append rate (issue [4/6])? Rows leave the outbox, with a relay that
 * reads the WAL, by {@link SlotWatermarks#sweep()}: {@code DELETE_CONFIRMED}, the pending rows the newest confirmed
 * watermark's snapshot sees, from the pending index up to its seq bound, in batches, each its own transaction
 * committed without waiting for the disk. This runs that very method, against a watermark confirmed as a slot that
 * passed it leaves it ({@code SweepBenchmark}'s way: the snapshot and WAL position of the moment, a confirmation time,
 * no walsender), over a backlog of {@code --rows} appended rows that it covers. In ABBA-alternating windows of
 * {@code --seconds}, {@code --rounds} of each:
 * <ul>
 *   <li><b>appenders</b>: {@code --writers} threads append at full speed with {@code OutboxWriter}, one event (a JSON
 *       payload of about 200 bytes) per transaction;</li>
 *   <li><b>appenders+delete</b>: the same, with the watermark sweep called in a loop on a thread of its own;</li>
 *   <li><b>delete</b>: the sweep alone.</li>
 * </ul>
 * Before every window the backlog is topped up to {@code --rows} rows, in transactions of 1,000, and a new confirmed
 * watermark covers every row then in the outbox (the appenders' rows of the windows before included, as the slot
 * would have confirmed them); {@code VACUUM} stands in for autovacuum. A window whose sweep found nothing more covered
 * says {@code RAN DRY}. Options: {@code --rows 1000000 --writers 16 --seconds 20 --rounds 3 --batch 1000
 * --no-vacuum}. Not part of CI; the schema is dropped at the end.
 */
public final class OutboxSweepBenchmark {

    static final String BENCH = "outbox-sweep";
    static final String APPENDERS = "appenders";
    static final String BOTH = "appenders+delete";
    static final String DELETE = "delete";
    static final String SLOT = "bench";

    /** The backlog's rows, as OutboxWriter writes them; a JSON payload of the appenders' size. */
    static final String APPEND = """
            INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version,
                                      payload)
            SELECT gen_random_uuid(), 'acme', 'alice', 'order', 'o-' || (n % 1000), 'OrderPlaced', 1,
                   convert_to('{"n":' || n || ',"note":"' || repeat('x', 170) || '"}', 'UTF8')
            FROM generate_series(1, ?) AS n ORDER BY n
            """;

    /** A watermark of everything committed, confirmed: what a slot that passed it leaves behind (as SweepBenchmark). */
    static final String CONFIRMED_WATERMARK = """
            INSERT INTO once_relay_watermark (slot_name, snapshot, lsn, seq_bound, server_started, walsender_pid,
                                              confirmed_at)
            SELECT ?, pg_current_snapshot(), pg_current_wal_insert_lsn(),
                   COALESCE((SELECT max(seq) FROM outbox_event WHERE published_at IS NULL AND parked_at IS NULL), 0),
                   pg_postmaster_start_time(), 0, now()
            """;

    private OutboxSweepBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        long rows = 1_000_000;
        int writers = 16;
        long millis = 20_000;
        int rounds = 3;
        int batch = SlotWatermarks.Options.BATCH_SIZE;
        boolean vacuum = true;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rows" -> rows = Long.parseLong(args[++i]);
                case "--writers" -> writers = Integer.parseInt(args[++i]);
                case "--seconds" -> millis = Long.parseLong(args[++i]) * 1000;
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--batch" -> batch = Integer.parseInt(args[++i]);
                case "--no-vacuum" -> vacuum = false;
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        SlotWatermarks.Options defaults = SlotWatermarks.Options.ofDefaults();
        SlotWatermarks.Options options = new SlotWatermarks.Options(defaults.interval(), Duration.ZERO, defaults.maxLag(),
                batch);
        PostgresServer server = TestPostgres.server();
        String schema = "bench_outbox_sweep_" + Long.toHexString(System.nanoTime());
        execute(server, "CREATE SCHEMA " + schema);
        try (HikariDataSource ds = TestDatabase.newDataSource(schema, writers + 4, null)) {
            OnceMigrations.migrate(ds);
            JdbcTemplate jdbc = new JdbcTemplate(ds);
            System.out.printf(Locale.ROOT, "%s on %s: backlog of %,d confirmed rows, %d appenders, %d x %d s windows of "
                            + "each, SlotWatermarks.sweep() (DELETE_CONFIRMED) batch %d, autovacuum %s, %s%n", BENCH, server,
                    rows, writers, rounds, millis / 1000, batch,
                    jdbc.queryForObject("SELECT current_setting('autovacuum')", String.class),
                    vacuum ? "VACUUM before every window" : "no VACUUM between windows");
            long t0 = System.nanoTime();
            topUp(jdbc, rows);
            jdbc.execute("VACUUM ANALYZE outbox_event");
            System.out.printf(Locale.ROOT, "%s prefill %,d rows in %.0f s, %.0f MiB with indexes%n", BENCH, rows,
                    (System.nanoTime() - t0) / 1e9,
                    jdbc.queryForObject("SELECT pg_total_relation_size('outbox_event')", Long.class) / 1048576.0);

            OutboxWriter writer = OutboxWriter.create(ds);
            TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
            String note = "x".repeat(170);
            LoadWindow.Request request = (thread, seq) -> tx.executeWithoutResult(s -> writer.append(OutboxEvent.builder()
                    .tenantId("acme").actorId("alice").aggregate("order", "o-" + (seq % 1000)).type("OrderPlaced", 1)
                    .payloadJson("{\"n\":" + seq + ",\"note\":\"" + note + "\"}").build()));

            List<String> kinds = List.of(APPENDERS, BOTH, DELETE);
            List<String> order = new ArrayList<>(List.of(BOTH)); // a warm-up window first, not counted
            order.addAll(LoadWindow.abba(kinds, rounds));
            Map<String, List<LoadWindow.Result>> results = new LinkedHashMap<>();
            kinds.forEach(k -> results.put(k, new ArrayList<>()));
            for (int w = 0; w < order.size(); w++) {
                String kind = order.get(w);
                long prep = System.nanoTime();
                long added = topUp(jdbc, rows);
                if (vacuum) {
                    jdbc.execute("VACUUM outbox_event");
                }
                long covered = jdbc.queryForObject("SELECT count(*) FROM outbox_event", Long.class);
                double prepSeconds = (System.nanoTime() - prep) / 1e9;
                LoadWindow.Sweep sweep = kind.equals(APPENDERS) ? null : new WatermarkSweep(ds, options);
                LoadWindow.Result r = LoadWindow.run(kind, writers, kind.equals(DELETE) ? null : request, sweep, millis);
                String line = LoadWindow.line(BENCH, "rows", w, r);
                System.out.println((w == 0 ? line.replace(" window  0 ", " warm-up   ") : line)
                        + String.format(Locale.ROOT, " [topped up %,d, %,d covered, prep %.1f s]", added, covered,
                        prepSeconds));
                if (w > 0) {
                    results.get(kind).add(r);
                }
            }
            summary(results);
        } finally {
            execute(server, "DROP SCHEMA " + schema + " CASCADE");
        }
    }

    /**
     * Appends rows until the outbox holds {@code rows} (the rows left from before count), then confirms a watermark
     * over all of them; returns how many it appended. Nothing else writes meanwhile, so the watermark covers every row.
     */
    private static long topUp(JdbcTemplate jdbc, long rows) {
        long pending = jdbc.queryForObject("SELECT count(*) FROM outbox_event", Long.class);
        long added = Math.max(0, rows - pending);
        for (long done = 0; done < added; done += 1_000) {
            jdbc.update(APPEND, (int) Math.min(1_000, added - done));
        }
        jdbc.update("DELETE FROM once_relay_watermark WHERE slot_name = ?", SLOT);
        jdbc.update(CONFIRMED_WATERMARK, SLOT);
        return added;
    }

    private static void summary(Map<String, List<LoadWindow.Result>> results) {
        double aRate = LoadWindow.median(results.get(APPENDERS).stream().map(LoadWindow.Result::requestsPerSecond).toList());
        double aP99 = LoadWindow.median(results.get(APPENDERS).stream().map(r -> r.p(0.99)).toList());
        double bRate = LoadWindow.median(results.get(BOTH).stream().map(LoadWindow.Result::requestsPerSecond).toList());
        double bP99 = LoadWindow.median(results.get(BOTH).stream().map(r -> r.p(0.99)).toList());
        double bDeleted = LoadWindow.median(results.get(BOTH).stream().map(LoadWindow.Result::sweptPerSecond).toList());
        double dDeleted = LoadWindow.median(results.get(DELETE).stream().map(LoadWindow.Result::sweptPerSecond).toList());
        boolean dry = results.values().stream().flatMap(List::stream).anyMatch(r -> r.dryCalls() > 0);
        int n = results.get(APPENDERS).size();
        System.out.printf(Locale.ROOT, "%s medians of %d windows each%s%n", BENCH, n,
                dry ? " (SOME WINDOWS RAN DRY: deletes rated up to then, appenders overlapped them only partly; raise --rows)" : "");
        System.out.printf(Locale.ROOT, "%s appenders alone        %8.0f rows/s  p99 %7.2f ms%n", BENCH, aRate, aP99);
        System.out.printf(Locale.ROOT, "%s appenders + delete     %8.0f rows/s  p99 %7.2f ms  (rate %.2fx, p99 %.2fx)%n",
                BENCH, bRate, bP99, bRate / aRate, bP99 / aP99);
        System.out.printf(Locale.ROOT, "%s delete while appending %8.0f rows/s = %.2fx the append rate beside it, %.2fx "
                + "appenders alone%n", BENCH, bDeleted, bDeleted / bRate, bDeleted / aRate);
        System.out.printf(Locale.ROOT, "%s delete alone           %8.0f rows/s = %.2fx the append rate alone%n", BENCH,
                dDeleted, dDeleted / aRate);
        System.out.printf(Locale.ROOT, "%s delete >= 2x appends: while appending %s (%.2fx), alone %s (%.2fx)%n", BENCH,
                bDeleted >= 2 * bRate ? "yes" : "NO", bDeleted / bRate, dDeleted >= 2 * aRate ? "yes" : "NO",
                dDeleted / aRate);
    }

    /** The real watermark sweep, one per window (closing it is how a sweep under way is made to stop). */
    private static final class WatermarkSweep implements LoadWindow.Sweep {

        private final SlotWatermarks watermarks;

        WatermarkSweep(HikariDataSource ds, SlotWatermarks.Options options) {
            this.watermarks = new SlotWatermarks(ds, SLOT, options);
        }

        @Override
        public long sweepOnce() {
            return watermarks.sweep();
        }

        @Override
        public void stop() {
            watermarks.close();
        }

        @Override
        public long progress() {
            return -1; // SlotWatermarks reports a call's rows when it returns
        }
    }

    private static void execute(PostgresServer server, String sql) throws Exception {
        try (Connection c = DriverManager.getConnection(server.jdbcUrl(), server.username(), server.password());
             Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
