package dev.once.retention;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps Once's tables bounded without an operator. Each round, for every {@link RetentionRule}, the one instance of
 * the service that holds the rule's advisory lock deletes the rows that are due, oldest first, in batches of
 * {@link RetentionOptions#batchSize()} rows, each batch one statement and its own transaction, with
 * {@link RetentionOptions#pause()} between them, until none is due; a batch never waits on a row another transaction
 * holds. Every instance then measures how long the oldest due row has waited ({@link #status()}), so that each one's
 * health and metrics tell whether the sweep keeps up, whichever instance sweeps.
 *
 * <p>The lock is a session lock on the connection the round runs on, one per rule and schema, so several instances
 * and several services sharing a database never sweep one table twice at a time, and a pooler must keep sessions
 * (not PgBouncer's transaction mode). Decisions use the database clock. Thread-safe.
 */
public final class RetentionSweeper implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RetentionSweeper.class);

    /** The advisory-lock namespace of the sweep (first key of {@code pg_try_advisory_lock(int, int)}). */
    static final int LOCK_SPACE = 0x0CE0_0003;

    static final String TRY_LOCK = "SELECT pg_try_advisory_lock(?, hashtext(current_schema() || '.' || ?))";
    static final String UNLOCK = "SELECT pg_advisory_unlock(?, hashtext(current_schema() || '.' || ?))";

    private final DataSource dataSource;
    private final RetentionOptions options;
    private final List<RetentionRule> rules;
    private final RetentionListener listener;
    private final Map<String, TableStatus> status = new ConcurrentHashMap<>();
    private volatile boolean running;
    private volatile boolean closed;
    private Thread thread;

    public RetentionSweeper(DataSource dataSource, RetentionOptions options, List<RetentionRule> rules,
                            RetentionListener listener) {
        if (rules.stream().map(RetentionRule::table).distinct().count() != rules.size()) {
            throw new IllegalArgumentException("one retention rule per table, got " + rules);
        }
        this.dataSource = dataSource;
        this.options = options;
        this.rules = List.copyOf(rules);
        this.listener = listener;
    }

    /** Sweeps on a daemon thread of its own, a round every {@link RetentionOptions#interval()}, the first at once. */
    public synchronized void start() {
        if (running || closed) {
            return;
        }
        running = true;
        thread = new Thread(this::loop, "once-retention");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * One round on the caller's thread, outside any transaction: each rule whose lock this instance gets is swept
     * until nothing is due, and every rule is measured. Returns the rows deleted per table. A rule that fails is
     * reported in {@link #status()} and to the listener, and the others still run.
     */
    public Map<String, Long> sweep() {
        Map<String, Long> deleted = new LinkedHashMap<>();
        for (RetentionRule rule : rules) {
            try (Connection connection = dataSource.getConnection()) {
                connection.setAutoCommit(true);
                long rows = lockAndSweep(connection, rule);
                Duration overdue = Duration.ofMillis(Math.max(0, overdueMillis(connection, rule)));
                deleted.put(rule.table(), rows);
                status.put(rule.table(), new TableStatus(rule.table(), overdue, rows, Instant.now(), null));
                listener.overdue(rule.table(), overdue);
            } catch (SQLException | RuntimeException e) {
                TableStatus last = status.get(rule.table());
                status.put(rule.table(), new TableStatus(rule.table(), last == null ? null : last.overdue(), 0,
                        Instant.now(), e.toString()));
                listener.failed(rule.table(), e);
                log.warn("Retention sweep of {} failed; trying again in {}: {}", rule.table(), options.interval(), e.toString());
            }
        }
        return deleted;
    }

    /** What the last round found per table, in rule order; empty before the first round. */
    public List<TableStatus> status() {
        return rules.stream().map(rule -> status.get(rule.table())).filter(s -> s != null).toList();
    }

    public RetentionOptions options() {
        return options;
    }

    public List<RetentionRule> rules() {
        return rules;
    }

    private void loop() {
        while (running) {
            sweep();
            LockSupport.parkNanos(options.interval().toNanos());
        }
    }

    /** Deletes what is due while this connection holds the rule's lock; 0 when another session sweeps the table. */
    private long lockAndSweep(Connection connection, RetentionRule rule) throws SQLException {
        if (!advisory(connection, TRY_LOCK, rule)) {
            return 0;
        }
        try (PreparedStatement delete = connection.prepareStatement(rule.deleteDue())) {
            long total = 0;
            int rows;
            do {
                delete.setLong(1, rule.period().toMillis());
                delete.setInt(2, options.batchSize());
                rows = delete.executeUpdate();
                total += rows;
                if (rows > 0) {
                    listener.swept(rule.table(), rows);
                }
                if (rows == options.batchSize() && !options.pause().isZero()) {
                    LockSupport.parkNanos(options.pause().toNanos());
                }
            } while (rows == options.batchSize() && !closed);
            return total;
        } finally {
            advisory(connection, UNLOCK, rule);
        }
    }

    private static long overdueMillis(Connection connection, RetentionRule rule) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(rule.overdue())) {
            statement.setLong(1, rule.period().toMillis());
            try (ResultSet rs = statement.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static boolean advisory(Connection connection, String sql, RetentionRule rule) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setInt(1, LOCK_SPACE);
            statement.setString(2, rule.table());
            try (ResultSet rs = statement.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    /** Stops the sweeping thread, letting a batch under way finish; waits up to 30 seconds. */
    @Override
    public void close() {
        Thread current;
        synchronized (this) {
            closed = true;
            running = false;
            current = thread;
        }
        if (current != null) {
            LockSupport.unpark(current);
            try {
                current.join(TimeUnit.SECONDS.toMillis(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * What the last round found for one table.
     *
     * @param overdue how long the oldest due row had waited past its due time (zero: none due); {@code null} when it
     *        has never been measured
     * @param swept rows this instance deleted in that round (zero also when another instance swept)
     * @param failure why the round failed, or {@code null}
     */
    public record TableStatus(String table, Duration overdue, long swept, Instant checkedAt, String failure) {
    }
}
