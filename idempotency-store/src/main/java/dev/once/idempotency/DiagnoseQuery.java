package dev.once.idempotency;

import dev.once.idempotency.Diagnosis.State;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Diagnose: reads one record and the database clock in one statement and names its state. The expiry and lease rules
 * are the same ones the claim statement applies.
 */
final class DiagnoseQuery {

    static final String DIAGNOSE = """
            SELECT statement_timestamp() AS db_now, r.id, r.status, r.request_hash, r.fencing_token, r.response_code,
                   r.response_content_type, r.response_headers::text AS response_headers, r.response_body,
                   r.response_body_omitted, r.task_id, r.outbox_event_id, r.locked_until, r.expires_at,
                   r.created_at, r.updated_at
            FROM (SELECT 1) AS clock
            LEFT JOIN idempotency_record r
              ON r.tenant_id = ? AND r.user_id = ? AND r.route = ? AND r.idempotency_key = ?
            """;

    private final JdbcTemplate jdbc;

    DiagnoseQuery(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    Diagnosis diagnose(IdempotencyScope scope, String requestHash) {
        return jdbc.queryForObject(DIAGNOSE, (rs, n) -> diagnosis(scope, requestHash, rs),
                scope.tenantId(), scope.userId(), scope.route().value(), scope.key().value());
    }

    private static Diagnosis diagnosis(IdempotencyScope scope, String requestHash, ResultSet rs) throws SQLException {
        Instant now = RecordColumns.instant(rs, "db_now");
        rs.getLong("id");
        if (rs.wasNull()) {
            return new Diagnosis(State.MISSING, scope, null, null, null, 0, null, null, null, null, null, null, null, now);
        }
        IdempotencyStatus status = IdempotencyStatus.fromDb(rs.getString("status"));
        String storedHash = rs.getString("request_hash");
        Boolean matches = requestHash == null ? null : storedHash.equals(requestHash);
        Instant lockedUntil = RecordColumns.instant(rs, "locked_until");
        Instant expiresAt = RecordColumns.instant(rs, "expires_at");
        boolean leaseLive = lockedUntil != null && lockedUntil.isAfter(now);
        State state;
        if (status == IdempotencyStatus.EXPIRED || (!expiresAt.isAfter(now) && !leaseLive)) {
            state = State.EXPIRED_REUSABLE;
        } else if (Boolean.FALSE.equals(matches)) {
            state = State.REQUEST_HASH_CONFLICT;
        } else {
            state = switch (status) {
                case SUCCEEDED -> State.REPLAYABLE;
                case FAILED -> State.FAILED_REQUIRES_EXPLICIT_RETRY;
                default -> leaseLive ? State.IN_PROGRESS : State.LEASE_EXPIRED;
            };
        }
        return new Diagnosis(state, scope, status, storedHash, matches, rs.getLong("fencing_token"),
                RecordColumns.response(rs), rs.getString("task_id"), RecordColumns.uuid(rs, "outbox_event_id"),
                lockedUntil, expiresAt, RecordColumns.instant(rs, "created_at"), RecordColumns.instant(rs, "updated_at"),
                now);
    }
}
