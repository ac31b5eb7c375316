package dev.once.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.idempotency.OnceMigrations;
import dev.once.spi.SlotWatermarks;
import dev.once.test.PostgresServer;
import dev.once.test.TestDatabase;
import dev.once.test.TestPostgres;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * What it costs per row to take published rows out of the outbox, both ways, on the same rows, in the same run,
 * alternating (ABBA): the watermark rule ({@link SlotWatermarks#sweep()}: the rows the newest confirmed watermark's
 * snapshot sees, from the pending index up to its seq bound, 1,000 per statement) against the per-batch delete the CDC
 * relay ran before it (the ids of each published batch of {@code --batch} rows, {@code DELETE ... WHERE id = ANY(?)} in
 * a transaction committed without waiting for the disk). {@code --retention} marks the rows published instead of
 * deleting them, both ways. Each round appends {@code --rows} rows (100,000) in transactions of 100, takes a
 * confirmed watermark of them as a slot's confirmation would, then times the removal. Options:
 * {@code --rows 100000 --batch 2000 --rounds 4 --retention}.
 */
public final class SweepBenchmark {

    static final String APPEND = """
            INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version,
                                      payload)
            SELECT gen_random_uuid(), 'acme', 'alice', 'order', 'o-' || (n % 1000), 'OrderPlaced', 1,
                   convert_to(jsonb_build_object('n', n, 'note', repeat('x', 170))::text, 'UTF8')
            FROM generate_series(1, ?) AS n ORDER BY n
            """;
    /** A watermark of everything committed, confirmed: what a slot that passed it leaves behind. */
    static final String CONFIRMED_WATERMARK = """
            INSERT INTO once_relay_watermark (slot_name, snapshot, lsn, seq_bound, server_started, walsender_pid,
                                              confirmed_at)
            SELECT 'bench', pg_current_snapshot(), pg_current_wal_insert_lsn(),
                   COALESCE((SELECT max(seq) FROM outbox_event WHERE published_at IS NULL AND parked_at IS NULL), 0),
                   pg_postmaster_start_time(), 0, now()
            """;
    static final String DELETE_BATCH = "DELETE FROM outbox_event WHERE id = ANY(?) RETURNING id";
    static final String MARK_BATCH = "UPDATE outbox_event SET published_at = now() WHERE id = ANY(?) RETURNING id";
    static final String ASYNC_COMMIT = "SET LOCAL synchronous_commit = off";

    private SweepBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int rows = intOption(args, "--rows", 100_000);
        int batch = intOption(args, "--batch", 2_000);
        int rounds = intOption(args, "--rounds", 4);
        boolean retention = List.of(args).contains("--retention");
        PostgresServer server = TestPostgres.server();
        System.out.printf(Locale.ROOT, "sweep benchmark on %s: %d rows a round, %s%n", server, rows,
                retention ? "marked published (a retention)" : "deleted");
        String schema = "bench_sweep_" + Long.toHexString(System.nanoTime());
        try (HikariDataSource ds = TestDatabase.newDataSource(schema, 4, null)) {
            new JdbcTemplate(ds).execute("CREATE SCHEMA IF NOT EXISTS " + schema);
            OnceMigrations.migrate(ds);
            JdbcTemplate jdbc = new JdbcTemplate(ds);
            List<Double> watermark = new ArrayList<>();
            List<Double> perBatch = new ArrayList<>();
            for (int round = 0; round < rounds; round++) {
                boolean watermarkFirst = round % 4 == 0 || round % 4 == 3; // ABBA
                for (int turn = 0; turn < 2; turn++) {
                    boolean byWatermark = (turn == 0) == watermarkFirst;
                    jdbc.update("DELETE FROM outbox_event");
                    jdbc.update("DELETE FROM once_relay_watermark");
                    jdbc.execute("VACUUM ANALYZE outbox_event");
                    List<UUID> ids = append(jdbc, rows);
                    double micros = byWatermark ? watermarkSweep(ds, jdbc, retention) : batchDeletes(ds, ids, batch,
                            retention);
                    (byWatermark ? watermark : perBatch).add(micros);
                    System.out.printf(Locale.ROOT, "round %d: %-36s %.2f us a row%n", round + 1, byWatermark
                            ? "watermark sweep (1,000 a statement)" : "per-batch delete (" + batch + " ids)", micros);
                }
            }
            double w = watermark.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
            double b = perBatch.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
            System.out.printf(Locale.ROOT, "%nmeans over %d rounds: watermark sweep %.2f us a row, per-batch delete "
                    + "(the baseline) %.2f us a row: %.2fx%n", rounds, w, b, w / b);
        } finally {
            try (HikariDataSource admin = TestDatabase.newDataSource("public", 1, null)) {
                new JdbcTemplate(admin).execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            }
        }
    }

    private static List<UUID> append(JdbcTemplate jdbc, int rows) {
        for (int done = 0; done < rows; done += 100) {
            jdbc.update(APPEND, Math.min(100, rows - done));
        }
        return jdbc.queryForList("SELECT id FROM outbox_event ORDER BY seq", UUID.class);
    }

    /** Takes a confirmed watermark, then times {@link SlotWatermarks#sweep()}; microseconds a row. */
    private static double watermarkSweep(HikariDataSource ds, JdbcTemplate jdbc, boolean retention) {
        jdbc.update(CONFIRMED_WATERMARK);
        SlotWatermarks watermarks = new SlotWatermarks(ds, "bench", SlotWatermarks.Options.ofDefaults()
                .withRetention(retention ? Duration.ofDays(7) : Duration.ZERO));
        long start = System.nanoTime();
        long swept = watermarks.sweep();
        return (System.nanoTime() - start) / 1e3 / swept;
    }

    /** Times the relay's former bookkeeping: one statement per published batch of ids; microseconds a row. */
    private static double batchDeletes(HikariDataSource ds, List<UUID> ids, int batch, boolean retention) {
        JdbcTemplate jdbc = new JdbcTemplate(ds);
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
        long start = System.nanoTime();
        for (int from = 0; from < ids.size(); from += batch) {
            Object[] chunk = ids.subList(from, Math.min(ids.size(), from + batch)).toArray();
            tx.executeWithoutResult(status -> {
                jdbc.execute(ASYNC_COMMIT);
                jdbc.query(retention ? MARK_BATCH : DELETE_BATCH, ps -> ps.setArray(1,
                        ps.getConnection().createArrayOf("uuid", chunk)), rs -> { });
            });
        }
        return (System.nanoTime() - start) / 1e3 / ids.size();
    }

    private static int intOption(String[] args, String name, int fallback) {
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals(name)) {
                return Integer.parseInt(args[i + 1]);
            }
        }
        return fallback;
    }
}
