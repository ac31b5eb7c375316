package dev.once.spi;

import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowCallbackHandler;

/**
 * What happens to an outbox row once Kafka has acknowledged or refused its event: the polling relay deletes or marks
 * what Kafka acknowledged ({@link #settle}); both relays park what Kafka refused, with the events of its aggregate
 * behind it ({@link #park}). Runs on the caller's connection and transaction.
 */
public final class OutboxLedger {

    /**
     * Every relay statement is planned for the values it is given, in the transaction that sets this. A cached generic
     * plan is made once, from the statistics of the moment: an outbox that was nearly empty when last analysed and
     * holds a 100,000-row backlog now would get a sequential scan that compares every row with every id of the batch
     * (an array parameter is not hashed), and a drain slowed tenfold.
     */
    public static final String CUSTOM_PLANS = "SET LOCAL plan_cache_mode = force_custom_plan";

    static final String DELETE_PUBLISHED = "DELETE FROM outbox_event WHERE id = ANY(?) RETURNING id";

    static final String MARK_PUBLISHED = "UPDATE outbox_event SET published_at = now() WHERE id = ANY(?) RETURNING id";

    /** Parks a row, unless it is parked already (with the reason it was parked for first). */
    static final String PARK = """
            UPDATE outbox_event SET parked_at = now(), park_reason = ? WHERE id = ? AND parked_at IS NULL
            """;

    /** The reason a row is parked for when it waits behind a parked event of its aggregate. */
    public static String behind(String aggregate) {
        return "waiting behind a parked event of " + aggregate;
    }

    private final JdbcTemplate jdbc;
    private final Duration retention;

    /** A ledger on {@code jdbc}; published rows are deleted, or only marked when {@code retention} is not zero. */
    public OutboxLedger(JdbcTemplate jdbc, Duration retention) {
        this.jdbc = jdbc;
        this.retention = retention;
    }


    /**
     * Parks each of {@code rows} (id to reason) that is not parked yet; returns the ids whose rows this transaction
     * did not find. Kafka's reasons are cut to 2,000 characters.
     */
    public Set<UUID> park(Map<UUID, String> rows) {
        Set<UUID> notFound = new HashSet<>();
        rows.forEach((id, reason) -> {
            if (jdbc.update(PARK, reason.length() > 2000 ? reason.substring(0, 2000) : reason, id) == 0
                    && jdbc.queryForList(PARKED, Boolean.class, id).isEmpty()) {
                notFound.add(id);
            }
        });
        return notFound;
    }

    static final String PARKED = "SELECT true FROM outbox_event WHERE id = ? AND parked_at IS NOT NULL";

    /**
     * Which of the given transaction ids (32 bits, as logical decoding gives them) belong to transactions still in
     * progress: each is placed in the epoch of the current snapshot's xmax (a recent transaction is at most one epoch
     * behind it) and asked of {@code pg_xact_status}, without assigning a transaction id of this session's own.
     */
    static final String IN_PROGRESS = """
            SELECT x.xid
            FROM (SELECT CAST(CAST(pg_snapshot_xmax(pg_current_snapshot()) AS text) AS numeric) AS xmax) s
            CROSS JOIN LATERAL (SELECT trunc(s.xmax / 4294967296) AS epoch) e
            CROSS JOIN unnest(CAST(? AS bigint[])) AS x(xid)
            WHERE pg_xact_status(CAST(CAST(
                      CASE WHEN e.epoch * 4294967296 + x.xid > s.xmax THEN (e.epoch - 1) * 4294967296 + x.xid
                           ELSE e.epoch * 4294967296 + x.xid END AS text) AS xid8)) = 'in progress'
            """;

    /**
     * Which of {@code transactions} are still in progress. A commit is decoded and streamed once it is flushed, which
     * is before it is visible: a moment before on a lone server, and for as long as the commit waits for a
     * synchronous standby. A streamed row that cannot be seen yet belongs to such a transaction.
     */
    public Set<Long> inProgress(Collection<Long> transactions) {
        if (transactions.isEmpty()) {
            return Set.of();
        }
        Object[] ids = transactions.stream().distinct().toArray();
        return new HashSet<>(jdbc.query(IN_PROGRESS, ps -> ps.setArray(1, ps.getConnection().createArrayOf("bigint", ids)),
                (rs, n) -> rs.getLong(1)));
    }

    static final String PARKED_AGGREGATES = """
            SELECT DISTINCT aggregate_type || '/' || aggregate_id FROM outbox_event
            WHERE parked_at IS NOT NULL AND aggregate_type || '/' || aggregate_id = ANY(?)
            """;

    /** Which of {@code aggregates} ({@code type/id}) have a parked event: their later events wait behind it. */
    public Set<String> parkedAggregates(Collection<String> aggregates) {
        Object[] distinct = aggregates.stream().distinct().toArray();
        return new HashSet<>(jdbc.query(PARKED_AGGREGATES, ps -> ps.setArray(1,
                ps.getConnection().createArrayOf("text", distinct)), (rs, n) -> rs.getString(1)));
    }


    /**
     * Deletes (or, with a retention period, marks) the rows of published events, which the polling relay read in the
     * same transaction; returns the ids whose rows this statement did not see.
     */
    public Set<UUID> settle(Collection<UUID> ids) {
        Set<UUID> notFound = new HashSet<>(ids);
        if (ids.isEmpty()) {
            return notFound;
        }
        jdbc.query(retention.isZero() ? DELETE_PUBLISHED : MARK_PUBLISHED,
                ps -> ps.setArray(1, ps.getConnection().createArrayOf("uuid", ids.toArray())),
                (RowCallbackHandler) rs -> notFound.remove(rs.getObject(1, UUID.class)));
        return notFound;
    }

}
