package dev.once.idempotency;

import dev.once.audit.Operator;
import dev.once.audit.OperatorAudit;
import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** {@link ParkedEvents} over JDBC; every filter is one WHERE clause, {@link #MATCHES}. */
final class JdbcParkedEvents implements ParkedEvents {

    /** The filter: a criterion that is NULL is left out. Age counts from the first failure, else from parking. */
    static final String MATCHES = """
            (CAST(:group AS text) IS NULL OR group_id = :group)
              AND (CAST(:handler AS text) IS NULL OR :handler = ANY (handler_keys))
              AND (CAST(:type AS text) IS NULL OR event_type = :type)
              AND (CAST(:tenant AS text) IS NULL OR tenant_id = :tenant)
              AND (CAST(:failure AS text) IS NULL OR fingerprint = :failure OR exception_class = :failure)
              AND (CAST(:olderThanMs AS bigint) IS NULL OR coalesce(first_failed_at, parked_at)
                   <= statement_timestamp() - CAST(:olderThanMs AS bigint) * interval '1 millisecond')
            """;

    static final String LIST = """
            SELECT id, group_id, topic, kafka_partition, kafka_offset, record_key, event_id, event_type, event_version,
                   tenant_id, status, reason, handler_keys, attempts, first_failed_at, last_failed_at, exception_class,
                   message, fingerprint, parked_at,
                   CASE WHEN next_attempt_at <> 'infinity' THEN next_attempt_at END AS next_attempt_at
            FROM once_parked_event
            WHERE status <> 'abandoned' AND """ + MATCHES + """
            ORDER BY group_id, parked_at, id
            LIMIT :limit
            """;

    /** Retry takes heads that failed or are failing; abandon takes any row that still holds. */
    static final String COUNT = """
            SELECT count(*) FILTER (WHERE status = 'failed' OR reason = 'failing') AS retriable,
                   count(*) AS abandonable
            FROM once_parked_event
            WHERE status <> 'abandoned' AND """ + MATCHES;

    /** Not under a dispatcher's lease: not being run at this moment. */
    static final String NOT_RUNNING = """
            (locked_until IS NULL OR locked_until <= statement_timestamp())
            """;

    /** Due now, with a new window: the next failure starts it again. */
    static final String RETRY = """
            UPDATE once_parked_event
            SET status = 'parked', next_attempt_at = statement_timestamp(), retry_until = NULL,
                locked_until = NULL, updated_at = statement_timestamp()
            WHERE status <> 'abandoned' AND (status = 'failed' OR reason = 'failing') AND """ + NOT_RUNNING
            + " AND " + MATCHES;

    static final String ABANDON = """
            UPDATE once_parked_event
            SET status = 'abandoned', locked_until = NULL, updated_at = statement_timestamp()
            WHERE status <> 'abandoned' AND """ + NOT_RUNNING + " AND " + MATCHES + """
            RETURNING group_id, topic, kafka_partition, record_key
            """;

    static final String SUMMARY = """
            SELECT group_id,
                   count(*) FILTER (WHERE status = 'parked' AND reason = 'held') AS held,
                   count(*) FILTER (WHERE status = 'parked' AND reason = 'failing') AS failing,
                   count(*) FILTER (WHERE status = 'failed') AS failed,
                   count(*) FILTER (WHERE status = 'parked' AND reason = 'behind') AS behind,
                   count(DISTINCT (topic, kafka_partition, coalesce(record_key, CAST(id AS text)), tenant_id)) AS keys
            FROM once_parked_event
            WHERE status <> 'abandoned'
            GROUP BY group_id
            ORDER BY group_id
            """;

    /**
     * Failing and failed events by handler and fingerprint; a failure that names two handlers counts in both. The
     * slice is written {@code [1 : 20]}: unspaced, the named-parameter parser would read {@code :20} as a parameter.
     */
    static final String FAILURE_GROUPS = """
            SELECT h.handler_key, fingerprint, min(exception_class) AS exception_class,
                   (array_agg(message ORDER BY last_failed_at DESC NULLS LAST, id DESC))[1] AS message,
                   count(*) AS events,
                   count(DISTINCT (group_id, topic, kafka_partition, coalesce(record_key, CAST(id AS text)),
                                   tenant_id)) AS keys,
                   min(first_failed_at) AS first_failed_at, max(last_failed_at) AS last_failed_at,
                   (array_agg(DISTINCT tenant_id) FILTER (WHERE tenant_id IS NOT NULL))[1 : 20] AS tenants
            FROM once_parked_event CROSS JOIN LATERAL unnest(handler_keys) AS h(handler_key)
            WHERE status <> 'abandoned' AND (status = 'failed' OR reason = 'failing') AND """ + MATCHES + """
            GROUP BY h.handler_key, fingerprint
            ORDER BY events DESC, h.handler_key, fingerprint
            LIMIT :limit
            """;

    /**
     * After an abandon, in the same transaction: the first row that still holds on each key it touched (each tenant's)
     * is due, if it was waiting behind the rows abandoned.
     */
    static final String NEXT_HEADS = """
            UPDATE once_parked_event p
            SET next_attempt_at = statement_timestamp(), updated_at = statement_timestamp()
            FROM (SELECT DISTINCT ON (e.group_id, e.topic, e.kafka_partition, e.record_key, e.tenant_id) e.id
                  FROM once_parked_event e
                  JOIN unnest(CAST(:groups AS text[]), CAST(:topics AS text[]), CAST(:partitions AS integer[]),
                              CAST(:keys AS text[])) AS k(g, t, pa, rk)
                    ON e.group_id = k.g AND e.topic = k.t AND e.kafka_partition = k.pa AND e.record_key = k.rk
                  WHERE e.status <> 'abandoned'
                  ORDER BY e.group_id, e.topic, e.kafka_partition, e.record_key, e.tenant_id, e.kafka_offset) AS head
            WHERE p.id = head.id AND p.status = 'parked' AND p.next_attempt_at = 'infinity'
            """;

    private record Key(String group, String topic, int partition, String key) {
    }

    private final NamedParameterJdbcTemplate jdbc;
    private final TransactionTemplate transactions;
    private final OperatorAudit audit;

    JdbcParkedEvents(DataSource dataSource) {
        this.jdbc = new NamedParameterJdbcTemplate(dataSource);
        this.transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        this.audit = OperatorAudit.create(dataSource);
    }

    @Override
    public List<ParkedEvent> list(Filter filter, int limit) {
        return jdbc.query(LIST, parameters(filter).addValue("limit", limit), (rs, n) -> event(rs));
    }

    @Override
    public Counts count(Filter filter) {
        return jdbc.queryForObject(COUNT, parameters(filter),
                (rs, n) -> new Counts(rs.getLong("retriable"), rs.getLong("abandonable")));
    }

    @Override
    public List<GroupSummary> summary() {
        return jdbc.query(SUMMARY, (rs, n) -> new GroupSummary(rs.getString("group_id"), rs.getLong("held"),
                rs.getLong("failing"), rs.getLong("failed"), rs.getLong("behind"), rs.getLong("keys")));
    }

    @Override
    public List<FailureGroup> failureGroups(Filter filter, int limit) {
        return jdbc.query(FAILURE_GROUPS, parameters(filter).addValue("limit", limit), (rs, n) -> {
            Array tenants = rs.getArray("tenants");
            return new FailureGroup(rs.getString("handler_key"), rs.getString("fingerprint"),
                    rs.getString("exception_class"), rs.getString("message"), rs.getLong("events"),
                    rs.getLong("keys"), instant(rs.getTimestamp("first_failed_at")),
                    instant(rs.getTimestamp("last_failed_at")),
                    tenants == null ? List.of() : List.of((String[]) tenants.getArray()));
        });
    }

    @Override
    public int retry(Filter filter, Operator by) {
        return audit.record(by, "parked.retry", filter.criteria(), () -> jdbc.update(RETRY, parameters(filter)));
    }

    @Override
    public int abandon(Filter filter, Operator by) {
        return audit.record(by, "parked.abandon", filter.criteria(), () -> abandon(filter));
    }

    private int abandon(Filter filter) {
        Integer abandoned = transactions.execute(s -> {
            List<Key> keys = jdbc.query(ABANDON, parameters(filter), (rs, n) -> new Key(rs.getString("group_id"),
                    rs.getString("topic"), rs.getInt("kafka_partition"), rs.getString("record_key")));
            List<Key> keyed = keys.stream().filter(k -> k.key() != null).distinct().toList();
            if (!keyed.isEmpty()) {
                jdbc.update(NEXT_HEADS, new MapSqlParameterSource()
                        .addValue("groups", keyed.stream().map(Key::group).toArray(String[]::new))
                        .addValue("topics", keyed.stream().map(Key::topic).toArray(String[]::new))
                        .addValue("partitions", keyed.stream().map(Key::partition).toArray(Integer[]::new))
                        .addValue("keys", keyed.stream().map(Key::key).toArray(String[]::new)));
            }
            return keys.size();
        });
        return abandoned == null ? 0 : abandoned;
    }

    private static MapSqlParameterSource parameters(Filter filter) {
        return new MapSqlParameterSource()
                .addValue("group", filter.groupId())
                .addValue("handler", filter.handlerKey())
                .addValue("type", filter.eventType())
                .addValue("tenant", filter.tenantId())
                .addValue("failure", filter.failure())
                .addValue("olderThanMs", filter.olderThan() == null ? null : filter.olderThan().toMillis());
    }

    private static ParkedEvent event(ResultSet rs) throws SQLException {
        Array handlers = rs.getArray("handler_keys");
        List<String> handlerKeys = handlers == null ? List.of() : List.of((String[]) handlers.getArray());
        Object version = rs.getObject("event_version");
        return new ParkedEvent(rs.getLong("id"), rs.getString("group_id"), rs.getString("topic"),
                rs.getInt("kafka_partition"), rs.getLong("kafka_offset"), rs.getString("record_key"),
                rs.getString("event_id"), rs.getString("event_type"), version == null ? null : ((Number) version).intValue(),
                rs.getString("tenant_id"), rs.getString("status"), rs.getString("reason"), handlerKeys,
                rs.getInt("attempts"), instant(rs.getTimestamp("first_failed_at")),
                instant(rs.getTimestamp("last_failed_at")), rs.getString("exception_class"), rs.getString("message"),
                rs.getString("fingerprint"), instant(rs.getTimestamp("next_attempt_at")),
                instant(rs.getTimestamp("parked_at")));
    }

    private static Instant instant(Timestamp timestamp) {
        return timestamp == null ? null : timestamp.toInstant();
    }
}
