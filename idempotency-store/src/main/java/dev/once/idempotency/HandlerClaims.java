package dev.once.idempotency;

import java.time.Instant;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The operator's view of Kafka handlers' claims (routes {@code <event_type>:v<version>:<handler_key>}, keys = event
 * ids): which failed, and letting a failed handler run again on the event's next delivery or redrive.
 */
public final class HandlerClaims {

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

    /** A failed handler claim. */
    public record FailedHandler(String tenantId, String actorId, String route, String eventId, long attempts,
                                Instant failedAt, String reason) {

        /** The handler key: the route's last part. */
        public String handlerKey() {
            return route.substring(route.lastIndexOf(':') + 1);
        }
    }

    private final JdbcTemplate jdbc;

    public HandlerClaims(DataSource dataSource) {
        this.jdbc = new JdbcTemplate(dataSource);
    }

    /** Failed handler claims, newest first, for one handler key or all ({@code null}). */
    public List<FailedHandler> failed(String handlerKey, int limit) {
        return jdbc.query(FAILED, (rs, n) -> new FailedHandler(rs.getString("tenant_id"), rs.getString("user_id"),
                rs.getString("route"), rs.getString("idempotency_key"), rs.getLong("fencing_token"),
                RecordColumns.instant(rs, "updated_at"), rs.getString("reason")), handlerKey, handlerKey, limit);
    }

    /** Lets handler {@code handlerKey} run again for event {@code eventId}; returns how many claims were failed. */
    public int retry(String eventId, String handlerKey) {
        return jdbc.update(RETRY, eventId, handlerKey);
    }
}
