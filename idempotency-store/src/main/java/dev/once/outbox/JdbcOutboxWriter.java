package dev.once.outbox;

import java.util.UUID;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/** {@link OutboxWriter} over JDBC; {@link JdbcTemplate} takes the connection of the current transaction. */
final class JdbcOutboxWriter implements OutboxWriter {

    static final String INSERT = """
            INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version,
                                      payload, headers)
            VALUES (?, ?, ?, ?, ?, ?, ?, CAST(? AS jsonb), CAST(? AS jsonb))
            """;

    private final DataSource dataSource;
    private final JdbcTemplate jdbc;

    JdbcOutboxWriter(DataSource dataSource) {
        this.dataSource = dataSource;
        this.jdbc = new JdbcTemplate(dataSource);
    }

    @Override
    public UUID append(OutboxEvent event) {
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new OutboxTransactionException("OutboxWriter.append needs an active transaction: an outbox row must "
                    + "commit or roll back with the change it describes (run it inside @Transactional or the guard)");
        }
        if (!TransactionSynchronizationManager.hasResource(dataSource)) {
            // A transaction on another DataSource: the insert would silently autocommit on a connection of its own.
            throw new OutboxTransactionException("OutboxWriter.append: the active transaction does not hold a "
                    + "connection of the outbox's DataSource; use a transaction manager over that DataSource");
        }
        UUID id = event.id() != null ? event.id() : UuidV7.next();
        jdbc.update(INSERT, id, event.tenantId(), event.actorId(), event.aggregateType(), event.aggregateId(),
                event.eventType(), event.eventVersion(), event.payloadJson(), event.headersJson());
        return id;
    }
}
