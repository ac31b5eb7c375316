package dev.once.idempotency;

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
    public int retry(String eventId, String handlerKey) {
        return jdbc.update(RETRY, eventId, handlerKey);
    }
}
