package dev.once.idempotency;

import dev.once.outbox.OutboxEvent;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Completion with outbox rows in one statement: the record is completed (binding the first event's id) and, only if
 * that update matched, the events are inserted, by a single {@code WITH … UPDATE … INSERT … WHERE EXISTS}, so a
 * guarded request pays one round trip for its outbox rows and its completion together, and a stale token writes
 * nothing at all. Runs in the caller's transaction.
 */
final class CompleteWithEvents {

    static final String COMPLETE_WITH_EVENTS = """
            WITH done AS (
                UPDATE idempotency_record
                SET status = 'succeeded', response_code = ?, response_content_type = ?,
                    response_headers = CAST(? AS jsonb), response_body = ?, response_body_omitted = ?,
                    task_id = COALESCE(?, task_id), outbox_event_id = ?,
                    locked_until = NULL, updated_at = statement_timestamp()
                WHERE %s
                RETURNING id
            )
            INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version,
                                      payload, headers)
            SELECT e.id, e.tenant_id, e.actor_id, e.aggregate_type, e.aggregate_id, e.event_type, e.event_version,
                   CAST(e.payload AS jsonb), CAST(e.headers AS jsonb)
            FROM unnest(CAST(? AS uuid[]), CAST(? AS text[]), CAST(? AS text[]), CAST(? AS text[]),
                        CAST(? AS text[]), CAST(? AS text[]), CAST(? AS integer[]), CAST(? AS text[]),
                        CAST(? AS text[]))
                 AS e(id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version, payload, headers)
            WHERE EXISTS (SELECT 1 FROM done)
            """.formatted(ClaimOwner.CONDITION);

    private CompleteWithEvents() {
    }

    /** Binds the completion, then the events' columns as arrays; returns the rows inserted (0 when stale). */
    static int execute(JdbcTemplate jdbc, ClaimToken token, StoredResponse stored, String taskId,
                       List<OutboxEvent> events) {
        return jdbc.update(COMPLETE_WITH_EVENTS, ps -> {
            int n = events.size();
            UUID[] ids = new UUID[n];
            String[][] text = new String[7][n];
            Integer[] versions = new Integer[n];
            for (int i = 0; i < n; i++) {
                OutboxEvent e = events.get(i);
                ids[i] = e.id();
                text[0][i] = e.tenantId();
                text[1][i] = e.actorId();
                text[2][i] = e.aggregateType();
                text[3][i] = e.aggregateId();
                text[4][i] = e.eventType();
                versions[i] = e.eventVersion();
                text[5][i] = e.payloadJson();
                text[6][i] = e.headersJson();
            }
            Connection c = ps.getConnection();
            bindCompletion(ps, 1, token, stored, taskId, n == 0 ? null : ids[0]);
            ps.setArray(14, c.createArrayOf("uuid", ids));
            for (int column = 0; column < 5; column++) {
                ps.setArray(15 + column, c.createArrayOf("text", text[column]));
            }
            ps.setArray(20, c.createArrayOf("int4", versions));
            ps.setArray(21, c.createArrayOf("text", text[5]));
            ps.setArray(22, c.createArrayOf("text", text[6]));
        });
    }

    private static void bindCompletion(PreparedStatement ps, int first, ClaimToken token, StoredResponse stored,
                                       String taskId, UUID outboxEventId) throws SQLException {
        ps.setInt(first, stored.statusCode());
        ps.setString(first + 1, stored.contentType());
        ps.setString(first + 2, RecordColumns.headersJson(stored.headers()));
        ps.setBytes(first + 3, stored.bodyOmitted() ? null : stored.bodyUnsafe());
        ps.setBoolean(first + 4, stored.bodyOmitted());
        ps.setString(first + 5, taskId);
        ps.setObject(first + 6, outboxEventId);
        ClaimOwner.bind(ps, first + 7, token);
    }
}
