package dev.once.idempotency;

import dev.once.OnceException;
import dev.once.spi.Rounds;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The day partitions of {@code once_handler_claim}, kept with PostgreSQL's declarative partitioning and nothing else.
 * Each {@linkplain #maintain() round} creates the partitions of today and the next {@link Options#daysAhead()} days
 * (by the database clock), and drops every day whose last instant is older than the claim retention: first
 * {@code DETACH PARTITION … CONCURRENTLY}, which does not stop writers, then {@code DROP TABLE} of the detached table.
 * A day a claim needs and that does not exist (the rounds were not running) is created on demand, before the claim's
 * statement, and counted as such ({@link Status#createdOnDemand()}): writes never fail for want of a partition.
 *
 * <p>Several instances: a partition is created in one transaction that holds an advisory lock of the table's schema,
 * so two instances creating the same day one after the other find it there; a detach another instance has begun is
 * left to it and finished (or its table dropped) by a later round. No session state, so a pooler in transaction mode
 * may stand in front. Thread-safe.
 */
public final class ClaimPartitions implements AutoCloseable {

    /** How long a handler's claim is kept after its event's time, by default: Kafka's default retention, 7 days. */
    public static final Duration RETENTION = Duration.ofDays(7);
    /** How many days after today have their partition ready, by default. */
    public static final int DAYS_AHEAD = 3;
    /** How often a round runs, by default. */
    public static final Duration INTERVAL = Duration.ofMinutes(10);

    static final String TABLE = "once_handler_claim";
    private static final long DAY_MILLIS = 86_400_000L;
    private static final DateTimeFormatter NAME_DAY = DateTimeFormatter.ofPattern("yyyyMMdd");
    private static final Pattern BOUND = Pattern.compile("FROM \\((\\d+)\\) TO \\((\\d+)\\)");
    private static final Logger log = LoggerFactory.getLogger(ClaimPartitions.class);

    /** The advisory-lock namespace of partition creation (first key of {@code pg_advisory_xact_lock(int, int)}). */
    static final int LOCK_SPACE = 0x0CE0_0004;

    /**
     * Every partition of the table: its bounds, its size, and the database clock. A partition that another instance
     * drops while this reads the catalog is still listed (the statement's snapshot predates the drop) but has no
     * bound any more; {@link #partitions()} leaves it out.
     */
    static final String LIST = """
            SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) AS bound, i.inhdetachpending AS detaching,
                   CAST(c.reltuples AS bigint) AS rows, pg_total_relation_size(c.oid) AS bytes,
                   CAST(EXTRACT(EPOCH FROM statement_timestamp()) * 1000 AS bigint) AS db_now
            FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = to_regclass('once_handler_claim')
            """;

    /** Tables named like a day partition in the table's schema that are no partition any more: a detach finished. */
    static final String DETACHED = """
            SELECT c.relname FROM pg_class c
            WHERE c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = to_regclass('once_handler_claim'))
              AND c.relkind = 'r' AND c.relname ~ '^once_handler_claim_[0-9]{8}$' AND NOT c.relispartition
            """;

    /** The schema of the table, for qualified names. */
    static final String SCHEMA = """
            SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE c.oid = to_regclass('once_handler_claim')
            """;

    static final String LOCK = """
            SELECT pg_advisory_xact_lock(?, hashtext(current_schema() || '.once_handler_claim')),
                   CAST(EXTRACT(EPOCH FROM statement_timestamp()) * 1000 AS bigint)
            """;

    static final String EXISTS = """
            SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = to_regclass('once_handler_claim') AND c.relname = ?
            """;

    private final DataSource dataSource;
    private final Options options;
    private final Listener listener;
    private final Rounds rounds;
    /** Days known to have a partition (true) or to be past the retention (false): catalog facts that only age. */
    private final Map<Integer, Boolean> known = new ConcurrentHashMap<>();
    private final AtomicLong createdOnDemand = new AtomicLong();
    private volatile Status status;
    private volatile String schema;

    private ClaimPartitions(DataSource dataSource, Options options, Listener listener) {
        this.dataSource = dataSource;
        this.options = options;
        this.listener = listener;
        this.rounds = new Rounds("once-claim-partitions", options.interval(), this::round);
    }

    public static ClaimPartitions create(DataSource dataSource, Options options) {
        return create(dataSource, options, Listener.NONE);
    }

    public static ClaimPartitions create(DataSource dataSource, Options options, Listener listener) {
        return new ClaimPartitions(dataSource, options, listener);
    }

    /** Runs a round every {@link Options#interval()} on a daemon thread of its own, the first at once. */
    public void start() {
        rounds.start();
    }

    @Override
    public void close() {
        rounds.close();
    }

    public Options options() {
        return options;
    }

    /** What the last round found; {@code null} before the first. */
    public Status status() {
        return status;
    }

    private void round() {
        try {
            maintain();
        } catch (RuntimeException e) {
            log.warn("Maintenance of {}'s partitions failed; trying again in {}: {}", TABLE, options.interval(), e.toString());
        }
    }

    /**
     * One round on the caller's thread: creates the partitions of today and the days ahead, drops the days past the
     * retention, and returns what it did. A failure is also kept in {@link #status()}.
     */
    public Round maintain() {
        try {
            return maintainOnce();
        } catch (RuntimeException e) {
            Status last = status;
            status = new Status(Instant.now(), last == null ? -1 : last.daysAhead(), createdOnDemand.get(),
                    last == null ? Duration.ZERO : last.overdue(), e.toString());
            listener.failed(e);
            throw e;
        }
    }

    private Round maintainOnce() {
        List<Integer> created = new ArrayList<>();
        List<Integer> dropped = new ArrayList<>();
        List<Partition> before = partitions();
        long now = before.isEmpty() ? System.currentTimeMillis() : before.get(0).dbNow();
        int today = (int) Math.floorDiv(now, DAY_MILLIS);
        Set<Integer> present = ConcurrentHashMap.newKeySet();
        before.forEach(p -> present.add(p.day()));
        for (int day = today; day <= today + options.daysAhead(); day++) {
            if (!present.contains(day) && create(day, false) == Creation.CREATED) {
                created.add(day);
            }
        }
        for (Partition partition : before) {
            if (partition.day() > 0 && due(partition.day(), now)) {
                if (detachAndDrop(partition)) {
                    dropped.add(partition.day());
                }
            } else if (partition.day() > 0) {
                known.put(partition.day(), true);
            }
        }
        for (String leftover : query(DETACHED, rs -> rs.getString(1))) {
            int day = dayOfName(leftover);
            if (due(day, now) && execute("DROP TABLE IF EXISTS " + qualified(leftover))) {
                dropped.add(day);
            }
        }
        dropped.forEach(day -> {
            known.put(day, false);
            listener.dropped(day);
        });
        int ahead = -1;
        List<Partition> after = partitions();
        Set<Integer> days = ConcurrentHashMap.newKeySet();
        after.forEach(p -> days.add(p.day()));
        while (days.contains(today + ahead + 1)) {
            ahead++;
        }
        long overdue = after.stream().filter(p -> p.day() > 0 && due(p.day(), now))
                .mapToLong(p -> now - ((p.day() + 1L) * DAY_MILLIS + options.retention().toMillis()))
                .max().orElse(0);
        status = new Status(Instant.ofEpochMilli(now), ahead, createdOnDemand.get(), Duration.ofMillis(overdue), null);
        listener.measured(ahead, Duration.ofMillis(overdue));
        return new Round(List.copyOf(created), List.copyOf(dropped));
    }

    /** Whether every claim of {@code day} is older than the retention at {@code now}. */
    private boolean due(int day, long now) {
        return (day + 1L) * DAY_MILLIS + options.retention().toMillis() <= now;
    }

    /**
     * Makes sure the partition of {@code day} exists, unless the day is past the retention (the store then claims in
     * the undated partition); a partition this creates is counted as created on demand.
     */
    void ensure(int day) {
        if (known.containsKey(day)) {
            return;
        }
        Creation creation = create(day, true);
        known.put(day, creation != Creation.TOO_OLD);
        if (creation == Creation.CREATED) {
            createdOnDemand.incrementAndGet();
            log.warn("Created the partition of {} for a claim, on demand: partition maintenance is behind or was not "
                    + "running (once.dispatcher.claim-partitions.*)", LocalDate.ofEpochDay(day));
        }
    }

    /** Forgets what is known of {@code day}: its partition turned out missing. */
    void forget(int day) {
        known.remove(day);
    }

    private enum Creation { CREATED, EXISTED, TOO_OLD }

    /** Creates the partition of {@code day} in one transaction, under the advisory lock, unless it exists or is due. */
    private Creation create(int day, boolean onDemand) {
        String name = nameOf(day);
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(false);
            try {
                Creation creation = createLocked(connection, day, name);
                connection.commit();
                if (creation == Creation.CREATED) {
                    listener.created(day, onDemand);
                }
                return creation;
            } catch (SQLException | RuntimeException e) {
                connection.rollback();
                throw e;
            } finally {
                connection.setAutoCommit(true);
            }
        } catch (SQLException e) {
            throw new OnceException("Could not create partition " + name + " of " + TABLE + ": " + e.getMessage(), e);
        }
    }

    private Creation createLocked(Connection connection, int day, String name) throws SQLException {
        long now;
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET LOCAL lock_timeout = '10s'");
        }
        try (PreparedStatement lock = connection.prepareStatement(LOCK)) {
            lock.setInt(1, LOCK_SPACE);
            try (ResultSet rs = lock.executeQuery()) {
                rs.next();
                now = rs.getLong(2);
            }
        }
        if (due(day, now)) {
            return Creation.TOO_OLD;
        }
        try (PreparedStatement exists = connection.prepareStatement(EXISTS)) {
            exists.setString(1, name);
            try (ResultSet rs = exists.executeQuery()) {
                if (rs.next()) {
                    return Creation.EXISTED;
                }
            }
        }
        try (Statement statement = connection.createStatement()) {
            // created apart, then attached: ATTACH takes SHARE UPDATE EXCLUSIVE on the table, which writers pass.
            // Taken first: another instance finalizing a detach holds it while it waits for every transaction that
            // holds a lock on the table, so a creator that read the table (LIKE) before asking for it would deadlock.
            statement.execute("LOCK TABLE " + qualified(TABLE) + " IN SHARE UPDATE EXCLUSIVE MODE");
            statement.execute("CREATE TABLE IF NOT EXISTS " + qualified(name) + " (LIKE " + qualified(TABLE)
                    + " INCLUDING DEFAULTS)");
            statement.execute("ALTER TABLE " + qualified(TABLE) + " ATTACH PARTITION " + qualified(name)
                    + " FOR VALUES FROM (" + day + ") TO (" + (day + 1) + ")");
        }
        return Creation.CREATED;
    }

    /** Detaches a partition without stopping writers, then drops it; false when another instance is at it. */
    private boolean detachAndDrop(Partition partition) {
        String name = qualified(partition.name());
        String detach = partition.detaching() ? "ALTER TABLE " + qualified(TABLE) + " DETACH PARTITION " + name + " FINALIZE"
                : "ALTER TABLE " + qualified(TABLE) + " DETACH PARTITION " + name + " CONCURRENTLY";
        return execute(detach) && execute("DROP TABLE IF EXISTS " + name);
    }

    /**
     * Runs one statement on its own; false when it met another instance's work on the same partition (it is no
     * partition any more, a detach is pending, a lock is held), which a later round finishes.
     */
    private boolean execute(String sql) {
        try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
            connection.setAutoCommit(true); // DETACH … CONCURRENTLY refuses to run inside a transaction block
            statement.execute(sql);
            return true;
        } catch (SQLException e) {
            if (contended(e.getSQLState())) {
                log.debug("{} met another instance's maintenance: {}", sql, e.getMessage());
                return false;
            }
            throw new OnceException(sql + " failed: " + e.getMessage(), e);
        }
    }

    private static boolean contended(String sqlState) {
        return sqlState != null && switch (sqlState) {
            // object_not_in_prerequisite_state, undefined_table, invalid_table_definition, lock_not_available,
            // deadlock_detected, query_canceled (a lock_timeout)
            case "55000", "42P01", "42P16", "55P03", "40P01", "57014" -> true;
            default -> false;
        };
    }

    /** Every partition, oldest day first (the undated one first of all), with the database clock. */
    public List<Partition> partitions() {
        List<Partition> partitions = query(LIST, rs -> {
            if (rs.getString("bound") == null) {
                return null; // dropped by another instance while this read
            }
            Matcher bound = BOUND.matcher(rs.getString("bound"));
            int day = bound.find() ? Integer.parseInt(bound.group(1)) : -1;
            long rows = rs.getLong("rows");
            return new Partition(rs.getString("relname"), day, rs.getBoolean("detaching"), Math.max(rows, 0),
                    rs.getLong("bytes"), day > 0 ? (day + 1L) * DAY_MILLIS + options.retention().toMillis() : -1,
                    rs.getLong("db_now"));
        });
        partitions.removeIf(java.util.Objects::isNull);
        partitions.sort(java.util.Comparator.comparingInt(Partition::day));
        return partitions;
    }

    private interface Row<T> {
        T read(ResultSet rs) throws SQLException;
    }

    private <T> List<T> query(String sql, Row<T> row) {
        try (Connection connection = dataSource.getConnection();
             PreparedStatement statement = connection.prepareStatement(sql);
             ResultSet rs = statement.executeQuery()) {
            List<T> rows = new ArrayList<>();
            while (rs.next()) {
                rows.add(row.read(rs));
            }
            return rows;
        } catch (SQLException e) {
            throw new OnceException("Could not read the partitions of " + TABLE + ": " + e.getMessage(), e);
        }
    }

    private String qualified(String name) {
        String s = schema;
        if (s == null) {
            List<String> found = query(SCHEMA, rs -> rs.getString(1));
            if (found.isEmpty()) {
                throw new OnceException("Table " + TABLE + " does not exist: run Once's migrations (OnceMigrations.migrate)");
            }
            schema = s = found.get(0);
        }
        return '"' + s.replace("\"", "\"\"") + "\"." + '"' + name + '"';
    }

    static String nameOf(int day) {
        return TABLE + "_" + NAME_DAY.format(LocalDate.ofEpochDay(day));
    }

    static int dayOfName(String name) {
        return (int) LocalDate.parse(name.substring(TABLE.length() + 1), NAME_DAY).toEpochDay();
    }

    /**
     * How partitions are kept.
     *
     * @param retention how long a claim is kept after its event's time: {@code once.dispatcher.claim-retention}
     * @param daysAhead how many days after today have their partition ready
     * @param interval how often a round runs
     */
    public record Options(Duration retention, int daysAhead, Duration interval) {

        public Options {
            if (retention == null || retention.isNegative() || retention.isZero()) {
                throw new IllegalArgumentException("the claim retention must be positive, was " + retention);
            }
            if (daysAhead < 1) {
                throw new IllegalArgumentException("at least one day ahead must be kept ready, was " + daysAhead);
            }
            if (interval == null || interval.isNegative() || interval.isZero()) {
                throw new IllegalArgumentException("the interval must be positive, was " + interval);
            }
        }

        public static Options ofDefaults() {
            return new Options(RETENTION, DAYS_AHEAD, INTERVAL);
        }

        public Options withRetention(Duration retention) {
            return new Options(retention, daysAhead, interval);
        }
    }

    /**
     * One partition.
     *
     * @param day days since 1970-01-01 (UTC); 0 for the undated partition
     * @param rows the planner's estimate of its rows (0 before it was first analysed)
     * @param dropAtMillis when it is due to be dropped, by the database clock (epoch milliseconds); -1 for the undated one
     * @param dbNowMillis the database clock when this was read
     */
    public record Partition(String name, int day, boolean detaching, long rows, long bytes, long dropAtMillis,
                            long dbNowMillis) {

        /** The day as a date; {@code null} for the undated partition. */
        public LocalDate date() {
            return day > 0 ? LocalDate.ofEpochDay(day) : null;
        }

        public boolean undated() {
            return day == 0;
        }

        long dbNow() {
            return dbNowMillis;
        }
    }

    /** What one round did: the days it created and dropped. */
    public record Round(List<Integer> created, List<Integer> dropped) {
    }

    /**
     * What the last round found.
     *
     * @param daysAhead how many days after today have their partition (-1: not even today's)
     * @param createdOnDemand how many partitions this instance created for a claim since it started
     * @param overdue how long the oldest day due to be dropped has waited (zero: none)
     * @param failure why the last round failed, or {@code null}
     */
    public record Status(Instant checkedAt, int daysAhead, long createdOnDemand, Duration overdue, String failure) {
    }

    /** Hears what maintenance does, for metrics. */
    public interface Listener {
        Listener NONE = new Listener() {
        };

        default void created(int day, boolean onDemand) {
        }

        default void dropped(int day) {
        }

        default void measured(int daysAhead, Duration overdue) {
        }

        default void failed(Exception e) {
        }
    }
}
