package dev.once.spi;

import dev.once.outbox.OutboxOperations;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * What a replication slot has published, asked of the slot itself: the rule by which rows leave the outbox when a relay
 * reads the write-ahead log (the CDC relay, or Kafka Connect in mode {@code external}). A row leaves only once the slot
 * that relays it has confirmed a WAL position past the row's commit; its consumer confirms a position only once it
 * has stored its offsets, which Debezium does after Kafka acknowledged the records.
 *
 * <p>Each round, in one transaction that one instance at a time holds per slot:
 * <ol>
 *   <li><b>sample</b> a watermark while a walsender streams the slot ({@link #SAMPLE}): a snapshot (the transactions
 *       it sees had ended) with the WAL insert position read right after it (their commit records lie below), and
 *       that walsender's session;</li>
 *   <li><b>confirm</b> the watermarks whose position the slot has confirmed, while the same session still streams it
 *       ({@link #CONFIRM}): a slot created anew starts out "confirming" every older position without having streamed
 *       any of it, and a new session is how a new slot shows;</li>
 *   <li><b>prune</b> what can never count, or no longer counts ({@link #PRUNE}, {@link #AFTER_A_GAP}, {@link #THIN});</li>
 * </ol>
 * then <b>sweep</b> the rows whose transactions the newest confirmed watermark's snapshot sees, in batches: deleted, or with a retention period
 * marked published and left to the retention sweep ({@link #DELETE_CONFIRMED}, {@link #MARK_CONFIRMED}). Nothing is
 * deleted while the slot is missing, lost or idle. The rows' own state and the watermarks are everything: no state in
 * memory, so any instance, a restarted one included, carries on. Parked rows stay for an operator.
 *
 * <p>Runs on a daemon thread of its own ({@link #start()}), or round by round ({@link #round()}). Thread-safe.
 */
public final class SlotWatermarks implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SlotWatermarks.class);

    /**
     * How a slot's watermarks are kept. Immutable; start from {@link #ofDefaults()}.
     *
     * @param interval how often a round runs: a confirmed row leaves the outbox about two rounds after the slot passed it
     * @param retention how long rows are kept after they were appended: zero deletes them once confirmed; otherwise they
     *        are marked published once confirmed and the retention sweep deletes them
     * @param maxLag the slot's health is DOWN while the newest watermark it confirmed is older than this
     * @param batchSize rows deleted or marked per statement
     */
    public record Options(Duration interval, Duration retention, Duration maxLag, int batchSize) {

        public static final Duration INTERVAL = Duration.ofSeconds(1);
        public static final Duration MAX_LAG = Duration.ofMinutes(2);
        public static final int BATCH_SIZE = 1_000;

        public Options {
            if (interval == null || interval.isNegative() || interval.isZero() || maxLag == null || maxLag.isNegative()
                    || retention == null || retention.isNegative() || batchSize < 1) {
                throw new IllegalArgumentException("the watermark interval must be positive, the retention and the "
                        + "longest lag not negative and the batch at least 1, were " + interval + ", " + retention
                        + ", " + maxLag + " and " + batchSize);
            }
        }

        public static Options ofDefaults() {
            return new Options(INTERVAL, Duration.ZERO, MAX_LAG, BATCH_SIZE);
        }

        public Options withInterval(Duration every) {
            return new Options(every, retention, maxLag, batchSize);
        }

        public Options withRetention(Duration keep) {
            return new Options(interval, keep, maxLag, batchSize);
        }

        public Options withMaxLag(Duration longest) {
            return new Options(interval, retention, longest, batchSize);
        }
    }

    /** The advisory-lock namespace of watermark rounds (first key of {@code pg_try_advisory_xact_lock(int, int)}). */
    static final int LOCK_SPACE = 0x0CE0_0004;

    /** One instance's round per slot and schema at a time; a transaction lock, so that it holds behind a pooler. */
    static final String ROUND_LOCK = "SELECT pg_try_advisory_xact_lock(?, hashtext(current_schema() || '.' || ?))";

    /**
     * A watermark, taken while a walsender streams the slot of this database. One statement, one snapshot: the
     * snapshot is taken when the statement starts, and the WAL insert position is read while it runs, after it. The
     * seq bound is the highest seq of a row pending in that snapshot, which shows every row the snapshot's
     * transactions wrote.
     */
    static final String SAMPLE = """
            INSERT INTO once_relay_watermark (slot_name, snapshot, lsn, seq_bound, server_started, walsender_pid)
            SELECT s.slot_name, pg_current_snapshot(), pg_current_wal_insert_lsn(),
                   COALESCE((SELECT max(seq) FROM outbox_event WHERE published_at IS NULL AND parked_at IS NULL), 0),
                   pg_postmaster_start_time(), s.active_pid
            FROM pg_replication_slots s
            WHERE s.slot_name = ? AND s.slot_type = 'logical' AND s.database = current_database() AND s.active
              AND s.active_pid IS NOT NULL AND COALESCE(s.wal_status, '') <> 'lost'
            """;

    /**
     * The watermarks whose position the slot has confirmed while the session they were taken under streams it. Past
     * it, strictly: a slot starts out at the position it was created at, having streamed nothing, and a watermark
     * taken before anything else was written lies exactly there. What committed before that position reaches the
     * consumer by its initial snapshot (Debezium's {@code snapshot.mode} {@code initial} or {@code when_needed}), and
     * Debezium confirms nothing past it before the snapshot is stored.
     */
    static final String CONFIRM = """
            UPDATE once_relay_watermark w SET confirmed_at = now()
            FROM pg_replication_slots s
            WHERE w.slot_name = ? AND w.confirmed_at IS NULL
              AND s.slot_name = w.slot_name AND s.database = current_database() AND s.active
              AND s.active_pid = w.walsender_pid AND w.server_started = pg_postmaster_start_time()
              AND s.confirmed_flush_lsn > w.lsn
            """;

    /**
     * Watermarks that no longer count: unconfirmed ones whose session no longer streams the slot (they never will be),
     * and confirmed ones older than the newest confirmed one, which covers them (a transaction a snapshot sees ended,
     * so every later snapshot sees it too).
     */
    static final String PRUNE = """
            DELETE FROM once_relay_watermark w
            WHERE w.slot_name = ? AND (
                  (w.confirmed_at IS NULL AND NOT EXISTS (
                       SELECT 1 FROM pg_replication_slots s
                       WHERE s.slot_name = w.slot_name AND s.database = current_database() AND s.active
                         AND s.active_pid = w.walsender_pid AND w.server_started = pg_postmaster_start_time()))
               OR (w.confirmed_at IS NOT NULL AND w.lsn < (SELECT max(lsn) FROM once_relay_watermark
                                                           WHERE slot_name = w.slot_name AND confirmed_at IS NOT NULL)))
            """;

    /**
     * After a gap in the rounds (every instance stopped, the database out of reach), the unconfirmed watermarks are
     * dropped: a round prunes a watermark as soon as its session stops streaming, and without rounds nobody watched.
     * Parameters: the slot twice, the gap in milliseconds.
     */
    static final String AFTER_A_GAP = """
            DELETE FROM once_relay_watermark
            WHERE slot_name = ? AND confirmed_at IS NULL
              AND (SELECT max(taken_at) FROM once_relay_watermark WHERE slot_name = ?)
                  < now() - CAST(? AS bigint) * interval '1 millisecond'
            """;

    /**
     * While the slot confirms nothing, the rounds go on sampling: of its unconfirmed watermarks the oldest (the slot's
     * lag in time) and the newest {@link #KEPT_UNCONFIRMED} are kept, so that the table stays small however long the
     * slot stands still. Parameters: the slot three times, the count kept.
     */
    static final String THIN = """
            DELETE FROM once_relay_watermark w
            WHERE w.slot_name = ? AND w.confirmed_at IS NULL
              AND w.id > (SELECT min(id) FROM once_relay_watermark WHERE slot_name = ? AND confirmed_at IS NULL)
              AND w.id < (SELECT min(id) FROM (SELECT id FROM once_relay_watermark
                                               WHERE slot_name = ? AND confirmed_at IS NULL
                                               ORDER BY id DESC LIMIT ?) AS newest)
            """;

    static final int KEPT_UNCONFIRMED = 60;

    /** A gap of this many intervals without a round drops the unconfirmed watermarks ({@link #AFTER_A_GAP}). */
    static final int GAP_INTERVALS = 10;

    /** The newest confirmed watermark: the rows its snapshot sees, at or below its seq bound, are published. */
    static final String FRONTIER = """
            SELECT CAST(snapshot AS text), seq_bound FROM once_relay_watermark
            WHERE slot_name = ? AND confirmed_at IS NOT NULL ORDER BY lsn DESC LIMIT 1
            """;

    /**
     * The published rows that are still pending, oldest first, from the pending index between the last seq this sweep
     * took and the seq bound: those whose transaction the watermark's snapshot sees. Starting after the last batch, a batch never
     * walks again over the index entries of the rows the batches before it deleted, which stay until vacuum. No row
     * locks: two instances sweeping at once wait for each other's rows, and each deletes a row once (the second finds
     * it gone); nothing else writes a confirmed row (parks come before the slot's confirmation, redrives take parked
     * rows only). Parameters: the last seq taken, the seq bound, the snapshot, the batch size.
     */
    static final String CONFIRMED_ROWS = """
            SELECT id FROM outbox_event
            WHERE published_at IS NULL AND parked_at IS NULL AND seq > ? AND seq <= ?
              AND pg_visible_in_snapshot(xact_id, CAST(? AS pg_snapshot))
            ORDER BY seq LIMIT ?
            """;

    /**
     * A batch commits without waiting for the disk: a crash that loses it leaves confirmed rows in the outbox, and the
     * next round removes them again.
     */
    static final String WITHOUT_WAITING = "SET LOCAL synchronous_commit = off";

    static final String DELETE_CONFIRMED = "DELETE FROM outbox_event WHERE id IN (" + CONFIRMED_ROWS + ") RETURNING seq";

    static final String MARK_CONFIRMED = "UPDATE outbox_event SET published_at = now() WHERE id IN (" + CONFIRMED_ROWS
            + ") RETURNING seq";

    private final String slot;
    private final Options options;
    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final OutboxOperations operations;
    private final Rounds rounds;
    private final RateLimitedLog problems;

    public SlotWatermarks(DataSource dataSource, String slotName, Options options) {
        this.slot = slotName;
        this.options = options;
        this.jdbc = new JdbcTemplate(dataSource);
        this.tx = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        this.operations = OutboxOperations.create(dataSource);
        this.problems = new RateLimitedLog(log, "The watermarks of replication slot " + slotName);
        this.rounds = new Rounds("once-watermarks-" + slotName, options.interval(), this::roundOrReport);
    }

    public String slotName() {
        return slot;
    }

    public Options options() {
        return options;
    }

    /** What one round did: a watermark taken, watermarks confirmed, rows deleted or marked published. */
    public record Round(boolean sampled, int confirmed, long swept) {
    }

    /**
     * One round on the caller's thread: sample, confirm and prune (unless another instance is in its round for this
     * slot), then sweep what the newest confirmed watermark covers.
     */
    public Round round() {
        int[] steps = tx.execute(status -> {
            if (!Boolean.TRUE.equals(jdbc.queryForObject(ROUND_LOCK, Boolean.class, LOCK_SPACE, slot))) {
                return null;
            }
            jdbc.update(AFTER_A_GAP, slot, slot, options.interval().multipliedBy(GAP_INTERVALS).toMillis());
            int sampled = jdbc.update(SAMPLE, slot);
            int confirmed = jdbc.update(CONFIRM, slot);
            jdbc.update(PRUNE, slot);
            jdbc.update(THIN, slot, slot, slot, KEPT_UNCONFIRMED);
            return new int[] {sampled, confirmed};
        });
        long swept = sweep();
        return steps == null ? new Round(false, 0, swept) : new Round(steps[0] > 0, steps[1], swept);
    }

    /** Deletes (or marks published) every pending row the newest confirmed watermark covers; returns how many. */
    public long sweep() {
        List<Object[]> frontier = jdbc.query(FRONTIER, (rs, n) -> new Object[] {rs.getString(1), rs.getLong(2)}, slot);
        if (frontier.isEmpty()) {
            return 0;
        }
        String sql = options.retention().isZero() ? DELETE_CONFIRMED : MARK_CONFIRMED;
        long total = 0;
        long after = 0;
        List<Long> taken;
        do {
            long from = after;
            taken = tx.execute(status -> {
                jdbc.execute(WITHOUT_WAITING);
                return jdbc.queryForList(sql, Long.class, from, frontier.get(0)[1], frontier.get(0)[0],
                        options.batchSize());
            });
            total += taken.size();
            after = taken.stream().mapToLong(Long::longValue).max().orElse(after);
        } while (taken.size() == options.batchSize() && !rounds.closing());
        return total;
    }

    /** The slot as it is now, with its lag in bytes and in time. */
    public OutboxOperations.Slot status() {
        return operations.slot(slot);
    }

    /** Rounds on a daemon thread of its own, one per {@link Options#interval()}, the first at once. */
    public void start() {
        rounds.start();
    }

    private void roundOrReport() {
        try {
            round();
            problems.resolved();
        } catch (RuntimeException e) {
            problems.report("a round failed: " + TransientFailures.describe(e), e, TransientFailures.isTransient(e)
                    ? RateLimitedLog.Kind.OUTAGE : RateLimitedLog.Kind.FAILURE, options.interval());
        }
    }

    /** Stops the rounds, letting one under way finish; waits up to 30 seconds. */
    @Override
    public void close() {
        rounds.close();
    }
}
