package dev.once.idempotency;

import dev.once.audit.Operator;
import dev.once.audit.OperatorAudit;
import java.time.LocalDate;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;

/** {@link HandlerClaims} over JDBC, on {@code once_handler_claim}. */
final class JdbcHandlerClaims implements HandlerClaims {

    /** Read newest first from the partial index of failed claims. */
    static final String FAILED = """
            SELECT c.tenant_id, c.actor_id, r.route, c.event_id, c.fencing, c.failed_at, c.reason
            FROM once_handler_claim c JOIN once_handler_route r ON r.id = c.route_id
            WHERE c.status = 3 AND (CAST(? AS text) IS NULL OR r.route LIKE '%:' || CAST(? AS text))
            ORDER BY c.failed_at DESC
            LIMIT ?
            """;

    static final String RETENTION = """
            SELECT r.route, count(*) AS claims,
                   count(*) FILTER (WHERE c.status = 3) AS failed,
                   count(*) FILTER (WHERE c.status = 1) AS processing,
                   count(*) FILTER (WHERE c.day = 0) AS undated,
                   min(c.day) FILTER (WHERE c.day > 0) AS oldest_day
            FROM once_handler_claim c JOIN once_handler_route r ON r.id = c.route_id
            WHERE CAST(? AS text) IS NULL OR r.route LIKE '%:' || CAST(? AS text)
            GROUP BY r.route
            ORDER BY r.route
            """;

    /** Releasing the failed claim lets the next delivery claim it afresh and run the handler. */
    static final String RETRY = """
            UPDATE once_handler_claim c SET status = 4, failed_at = NULL
            FROM once_handler_route r
            WHERE r.id = c.route_id AND c.status = 3 AND c.event_id = CAST(? AS uuid) AND r.route LIKE '%:v%:' || ?
            """;

    private final JdbcTemplate jdbc;
    private final OperatorAudit audit;

    JdbcHandlerClaims(DataSource dataSource) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.audit = OperatorAudit.create(dataSource);
    }

    @Override
    public List<FailedHandler> failed(String handlerKey, int limit) {
        return jdbc.query(FAILED, (rs, n) -> new FailedHandler(rs.getString("tenant_id"), rs.getString("actor_id"),
                rs.getString("route"), rs.getString("event_id"), rs.getLong("fencing"),
                RecordColumns.instant(rs, "failed_at"), rs.getString("reason")), handlerKey, handlerKey, limit);
    }

    @Override
    public List<HandlerRetention> retention(String handlerKey) {
        return jdbc.query(RETENTION, (rs, n) -> {
            Integer oldest = rs.getObject("oldest_day", Integer.class);
            return new HandlerRetention(rs.getString("route"), rs.getLong("claims"), rs.getLong("failed"),
                    rs.getLong("processing"), rs.getLong("undated"), oldest == null ? null : LocalDate.ofEpochDay(oldest));
        }, handlerKey, handlerKey);
    }

    @Override
    public int retry(String eventId, String handlerKey, Operator by) {
        Map<String, Object> target = new LinkedHashMap<>();
        target.put("event_id", eventId);
        target.put("handler_key", handlerKey);
        return audit.record(by, "claim.retry", target, () -> jdbc.update(RETRY, eventId, handlerKey));
    }
}
