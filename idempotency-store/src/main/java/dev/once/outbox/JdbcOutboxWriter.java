package dev.once.outbox;

import dev.once.spi.CommitStatements;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.UUID;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * {@link OutboxWriter} over JDBC; {@link JdbcTemplate} takes the connection of the current transaction. On an
 * {@link dev.once.OnceDataSource} the insert is deferred to the commit and sent with it in one round trip; otherwise
 * it runs at once.
 */
final class JdbcOutboxWriter implements OutboxWriter {

    static final String INSERT = """
            INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version,
                                      payload, content_type, headers)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, CAST(? AS jsonb))
            """;

    private final DataSource dataSource;
    private final JdbcTemplate jdbc;
    private final OutboxTracing tracing;
    private final tools.jackson.databind.json.JsonMapper json;

    JdbcOutboxWriter(DataSource dataSource, OutboxTracing tracing, tools.jackson.databind.json.JsonMapper json) {
        this.dataSource = dataSource;
        this.jdbc = new JdbcTemplate(dataSource);
        this.tracing = tracing;
        this.json = json;
    }

    @Override
    public OutboxEvent.Builder event() {
        return OutboxEvent.builder(json);
    }

    @Override
    public UUID append(OutboxEvent appended) {
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new OutboxTransactionException("OutboxWriter.append needs an active transaction: an outbox row must "
                    + "commit or roll back with the change it describes (run it inside @Transactional or the guard)");
        }
        if (!TransactionSynchronizationManager.hasResource(dataSource)) {
            // A transaction on another DataSource: the insert would silently autocommit on a connection of its own.
            throw new OutboxTransactionException("OutboxWriter.append: the active transaction does not hold a "
                    + "connection of the outbox's DataSource; use a transaction manager over that DataSource");
        }
        OutboxEvent event = tracing.capture(appended);
        UUID id = event.id() != null ? event.id() : UuidV7.next();
        CommitStatements.Binder binder = (ps, first) -> bind(ps, first, id, event);
        if (!CommitStatements.defer(jdbc, INSERT, binder)) {
            jdbc.update(INSERT, ps -> binder.bind(ps, 1));
        }
        return id;
    }

    private static int bind(PreparedStatement ps, int first, UUID id, OutboxEvent event) throws SQLException {
        ps.setObject(first, id);
        ps.setString(first + 1, event.tenantId());
        ps.setString(first + 2, event.actorId());
        ps.setString(first + 3, event.aggregateType());
        ps.setString(first + 4, event.aggregateId());
        ps.setString(first + 5, event.eventType());
        ps.setInt(first + 6, event.eventVersion());
        ps.setBytes(first + 7, event.payload());
        ps.setString(first + 8, event.contentType());
        ps.setString(first + 9, event.headersJson());
        return first + 10;
    }
}
