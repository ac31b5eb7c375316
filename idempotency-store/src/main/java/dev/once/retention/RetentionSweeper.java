package dev.once.retention;

import dev.once.spi.Rounds;
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
 * <p>The lock is a transaction lock that each batch takes with its delete, one per rule and schema, so several
 * instances and several services sharing a database never sweep one table twice at a time, also behind a pooler in
 * transaction mode (PgBouncer's). Decisions use the database clock. Thread-safe.
 */
public final class RetentionSweeper implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RetentionSweeper.class);

    /** The advisory-lock namespace of the sweep (first key of {@code pg_try_advisory_xact_lock(int, int)}). */
    static final int LOCK_SPACE = 0x0CE0_0003;

    /** Taken by each batch's transaction before its delete; another instance's batch under way skips the rule. */
    static final String TRY_LOCK = "SELECT pg_try_advisory_xact_lock(?, hashtext(current_schema() || '.' || ?))";

    private final DataSource dataSource;
    private final RetentionOptions options;
    private final List<RetentionRule> rules;
    private final RetentionListener listener;
    private final Map<String, TableStatus> status = new ConcurrentHashMap<>();
    private final Rounds rounds;

    public RetentionSweeper(DataSource dataSource, RetentionOptions options, List<RetentionRule> rules,
                            RetentionListener listener) {
        if (rules.stream().map(RetentionRule::table).distinct().count() != rules.size()) {
            throw new IllegalArgumentException("one retention rule per table, got " + rules);
        }
        this.dataSource = dataSource;
        this.options = options;
        this.rules = List.copyOf(rules);
        this.listener = listener;
        this.rounds = new Rounds("once-retention", options.interval(), this::sweep);
    }

    /** Sweeps on a daemon thread of its own, a round every {@link RetentionOptions#interval()}, the first at once. */
    public void start() {
        rounds.start();
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
                long rows = lockAndSweep(connection, rule);
                connection.setAutoCommit(true);
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

    /**
     * Deletes what is due, one batch per transaction, each holding the rule's lock; stops when another instance holds
     * it (that one sweeps the table) or nothing more is due.
     */
    private long lockAndSweep(Connection connection, RetentionRule rule) throws SQLException {
        connection.setAutoCommit(false);
        try (PreparedStatement lock = connection.prepareStatement(TRY_LOCK);
             PreparedStatement delete = connection.prepareStatement(rule.deleteDue())) {
            long total = 0;
            int rows;
            do {
                lock.setInt(1, LOCK_SPACE);
                lock.setString(2, rule.table());
                try (ResultSet rs = lock.executeQuery()) {
                    if (!rs.next() || !rs.getBoolean(1)) {
                        connection.rollback();
                        return total;
                    }
                }
                delete.setLong(1, rule.period().toMillis());
                delete.setInt(2, options.batchSize());
                rows = delete.executeUpdate();
                connection.commit();
                total += rows;
                if (rows > 0) {
                    listener.swept(rule.table(), rows);
                }
                if (rows == options.batchSize() && !options.pause().isZero()) {
                    rounds.pause(options.pause());
                }
            } while (rows == options.batchSize() && !rounds.closing());
            return total;
        } catch (SQLException | RuntimeException e) {
            connection.rollback();
            throw e;
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

    /** Stops the sweeping thread, letting a batch under way finish; waits up to 30 seconds. */
    @Override
    public void close() {
        rounds.close();
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
