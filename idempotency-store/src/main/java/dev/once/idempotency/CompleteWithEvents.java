package dev.once.idempotency;

import dev.once.outbox.OutboxEvent;
import dev.once.outbox.OutboxWriter;
import dev.once.spi.CommitStatements;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Completion with outbox rows. At once ({@link #now}): the record is completed (binding the first event's id) and,
 * only if that update matched, the events are inserted, by a single {@code WITH … UPDATE …, … INSERT … WHERE EXISTS},
 * so a guarded request pays one round trip for its outbox rows and its completion together, and a stale token writes
 * nothing at all. With the commit ({@link #atCommit}, on an {@link dev.once.OnceDataSource}): each event as
 * {@link OutboxWriter} writes it, then the completion, which refuses the commit when the claim is stale, all sent with
 * the {@code COMMIT}. The round trip is shared anyway, and plain statements spare the server the combined one's array
 * parameters, function scan and common table expressions (in pgbench no worse, possibly cheaper: docs/BENCHMARKS.md).
 */
final class CompleteWithEvents {

    /** The completion, bound by {@link #bindCompletion}; parameters 1-7, then the claim's. */
    private static final String DONE = """
            WITH done AS (
                UPDATE idempotency_record
                SET status = 'succeeded', response_code = ?, response_content_type = ?,
                    response_headers = CAST(? AS jsonb), response_body = ?, response_body_omitted = ?,
                    task_id = COALESCE(?, task_id), outbox_event_id = ?,
                    locked_until = NULL, updated_at = statement_timestamp()
                WHERE %s
                RETURNING id
            )
            """.formatted(ClaimOwner.CONDITION);

    /** The writes at once; the statement below ends it with the select that reports the outcome. */
    private static final String WRITE = DONE.stripTrailing() + """
            , events AS (
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type,
                                          event_version, payload, content_type, headers)
                SELECT e.id, e.tenant_id, e.actor_id, e.aggregate_type, e.aggregate_id, e.event_type, e.event_version,
                       e.payload, e.content_type, CAST(e.headers AS jsonb)
                FROM unnest(CAST(? AS uuid[]), CAST(? AS text[]), CAST(? AS text[]), CAST(? AS text[]),
                            CAST(? AS text[]), CAST(? AS text[]), CAST(? AS integer[]), CAST(? AS bytea[]),
                            CAST(? AS text[]), CAST(? AS text[]))
                     AS e(id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version, payload,
                          content_type, headers)
                WHERE EXISTS (SELECT 1 FROM done)
            )
            """;

    /** At once: returns 1 when the claim held and the writes were made, 0 when stale (nothing written). */
    static final String COMPLETE_WITH_EVENTS = WRITE + "SELECT count(*) FROM done";

    /**
     * With the commit: sent before its outcome can be read, so a stale claim raises (SQLState
     * {@value StaleClaimException#SQLSTATE}, from the schema's function {@code once_claim_held}) and the commit fails
     * with it. The events precede it as statements of their own.
     */
    static final String COMPLETE_AT_COMMIT = DONE + "SELECT once_claim_held(count(*)) FROM done";

    private CompleteWithEvents() {
    }

    /** Writes now; {@code false} when the claim is stale. */
    static boolean now(JdbcTemplate jdbc, ClaimToken token, StoredResponse stored, String taskId,
                       List<OutboxEvent> events) {
        Long done = jdbc.query(COMPLETE_WITH_EVENTS, ps -> bind(ps, 1, token, stored, taskId, events),
                rs -> rs.next() ? rs.getLong(1) : 0L);
        return done != null && done > 0;
    }

    /**
     * Defers the writes to the commit when the connection allows it: the events through {@code outbox} (which defers
     * them on the same connection, and refuses the first or none, its checks being the same for each), then the
     * completion, which cannot be refused, so that nothing is deferred without the rest. Otherwise writes now, or
     * throws when stale.
     */
    static void atCommit(JdbcTemplate jdbc, OutboxWriter outbox, ClaimToken token, StoredResponse stored,
                         String taskId, List<OutboxEvent> events) {
        if (CommitStatements.deferrable(jdbc)) {
            for (OutboxEvent event : events) {
                outbox.append(event);
            }
            UUID firstEvent = events.isEmpty() ? null : events.get(0).id();
            CommitStatements.defer(jdbc, COMPLETE_AT_COMMIT,
                    (ps, first) -> bindCompletion(ps, first, token, stored, taskId, firstEvent));
        } else if (!now(jdbc, token, stored, taskId, events)) {
            throw new StaleClaimException(token);
        }
    }

    /** The completion's parameters, then the claim's; returns the next parameter's index. */
    private static int bindCompletion(PreparedStatement ps, int first, ClaimToken token, StoredResponse stored,
                                      String taskId, UUID firstEvent) throws SQLException {
        ps.setInt(first, stored.statusCode());
        ps.setString(first + 1, stored.contentType());
        ps.setString(first + 2, RecordColumns.headersJson(stored.headers()));
        ps.setBytes(first + 3, stored.bodyOmitted() ? null : stored.bodyUnsafe());
        ps.setBoolean(first + 4, stored.bodyOmitted());
        ps.setString(first + 5, taskId);
        ps.setObject(first + 6, firstEvent);
        return ClaimOwner.bind(ps, first + 7, token);
    }

    /** Binds the completion, then the events' columns as arrays; returns the next parameter's index. */
    private static int bind(PreparedStatement ps, int first, ClaimToken token, StoredResponse stored, String taskId,
                            List<OutboxEvent> events) throws SQLException {
        int n = events.size();
        UUID[] ids = new UUID[n];
        String[][] text = new String[7][n];
        Integer[] versions = new Integer[n];
        byte[][] payloads = new byte[n][];
        for (int i = 0; i < n; i++) {
            OutboxEvent e = events.get(i);
            ids[i] = e.id();
            text[0][i] = e.tenantId();
            text[1][i] = e.actorId();
            text[2][i] = e.aggregateType();
            text[3][i] = e.aggregateId();
            text[4][i] = e.eventType();
            versions[i] = e.eventVersion();
            payloads[i] = e.payload();
            text[5][i] = e.contentType();
            text[6][i] = e.headersJson();
        }
        int next = bindCompletion(ps, first, token, stored, taskId, n == 0 ? null : ids[0]);
        Connection c = ps.getConnection();
        ps.setArray(next, c.createArrayOf("uuid", ids));
        for (int column = 0; column < 5; column++) {
            ps.setArray(next + 1 + column, c.createArrayOf("text", text[column]));
        }
        ps.setArray(next + 6, c.createArrayOf("int4", versions));
        ps.setArray(next + 7, c.createArrayOf("bytea", payloads));
        ps.setArray(next + 8, c.createArrayOf("text", text[5]));
        ps.setArray(next + 9, c.createArrayOf("text", text[6]));
        return next + 10;
    }
}
