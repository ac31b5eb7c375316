package dev.once.outbox;

import java.util.UUID;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Sends a parked event through the relay again. In one transaction, the parked event and every unpublished event
 * behind it in its aggregate are written anew in their order (same ids, new {@code seq}, not parked): the CDC relay
 * sees them as inserts, the polling relay as pending rows, and the aggregate keeps its order. If Kafka refuses the
 * event again, it is parked again.
 */
public final class OutboxRedrive {

    static final String REDRIVE = """
            WITH parked AS (
                SELECT aggregate_type, aggregate_id, seq FROM outbox_event WHERE id = ? AND parked_at IS NOT NULL
            ), moved AS (
                DELETE FROM outbox_event e USING parked p
                WHERE e.aggregate_type = p.aggregate_type AND e.aggregate_id = p.aggregate_id
                  AND e.seq >= p.seq AND e.published_at IS NULL
                RETURNING e.*
            )
            INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version,
                                      payload, headers, created_at)
            SELECT id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version, payload, headers,
                   created_at
            FROM moved ORDER BY seq
            """;

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;

    public OutboxRedrive(DataSource dataSource) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.tx = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
    }

    /** Re-queues parked event {@code eventId} and the events behind it; returns how many rows; 0 when not parked. */
    public int redrive(UUID eventId) {
        Integer rows = tx.execute(s -> jdbc.update(REDRIVE, eventId));
        return rows == null ? 0 : rows;
    }
}
