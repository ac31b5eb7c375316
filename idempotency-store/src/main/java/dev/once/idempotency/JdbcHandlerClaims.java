package dev.once.idempotency;

import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;

/** {@link HandlerClaims} over JDBC. */
final class JdbcHandlerClaims implements HandlerClaims {

    static final String FAILED = """
            SELECT tenant_id, user_id, route, idempotency_key, fencing_token, updated_at,
                   convert_from(response_body, 'UTF8') AS reason
            FROM idempotency_record
            WHERE status = 'failed' AND route LIKE '%:v%:%' AND route NOT LIKE '% %'
              AND (CAST(? AS text) IS NULL OR route LIKE '%:' || CAST(? AS text))
            ORDER BY updated_at DESC
            LIMIT ?
            """;

    /**
     * Live claims protect against redelivery ({@code expires_at} ahead); lapsed ones wait for the retention sweep.
     * The retention shown is the newest claim's: what the dispatcher was configured with when it last claimed.
     */
    static final String RETENTION = """
            SELECT route,
                   count(*) FILTER (WHERE live) AS claims,
                   count(*) FILTER (WHERE NOT live) AS lapsed,
                   count(*) FILTER (WHERE live AND status = 'failed') AS failed,
                   count(*) FILTER (WHERE live AND status = 'processing') AS processing,
                   min(claimed_at) FILTER (WHERE live) AS oldest_claim,
                   min(expires_at) FILTER (WHERE live) AS first_expiry,
                   CAST(EXTRACT(EPOCH FROM (array_agg(expires_at - claimed_at ORDER BY claimed_at DESC))[1]) * 1000 AS bigint)
                       AS retention_ms
            FROM (SELECT route, status, claimed_at, expires_at,
                         status <> 'expired' AND expires_at > statement_timestamp() AS live
                  FROM idempotency_record
                  WHERE route LIKE '%:v%:%' AND route NOT LIKE '% %'
                    AND (CAST(? AS text) IS NULL OR route LIKE '%:' || CAST(? AS text))) handler_claims
            GROUP BY route
            ORDER BY route
            """;

    /** Expiring the failed claim lets the next delivery claim it afresh and run the handler. */
    static final String RETRY = """
            UPDATE idempotency_record
            SET status = 'expired', expires_at = statement_timestamp(), updated_at = statement_timestamp()
            WHERE status = 'failed' AND idempotency_key = ? AND route LIKE '%:v%:' || ?
            """;

    private final JdbcTemplate jdbc;

    JdbcHandlerClaims(DataSource dataSource) {
        this.jdbc = new JdbcTemplate(dataSource);
    }

    @Override
    public List<FailedHandler> failed(String handlerKey, int limit) {
        return jdbc.query(FAILED, (rs, n) -> new FailedHandler(rs.getString("tenant_id"), rs.getString("user_id"),
                rs.getString("route"), rs.getString("idempotency_key"), rs.getLong("fencing_token"),
                RecordColumns.instant(rs, "updated_at"), rs.getString("reason")), handlerKey, handlerKey, limit);
    }

    @Override
    public List<HandlerRetention> retention(String handlerKey) {
        return jdbc.query(RETENTION, (rs, n) -> new HandlerRetention(rs.getString("route"), rs.getLong("claims"),
                rs.getLong("lapsed"), rs.getLong("failed"), rs.getLong("processing"), RecordColumns.instant(rs, "oldest_claim"),
                RecordColumns.instant(rs, "first_expiry"), Duration.ofMillis(rs.getLong("retention_ms"))), handlerKey, handlerKey);
    }

    @Override
    public int retry(String eventId, String handlerKey) {
        return jdbc.update(RETRY, eventId, handlerKey);
    }
}
