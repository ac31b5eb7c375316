package dev.once.outbox;

import dev.once.spi.R2dbcStatements;
import java.util.UUID;
import org.springframework.r2dbc.core.DatabaseClient;
import reactor.core.publisher.Mono;

/**
 * Appends outbox rows over R2DBC, in the R2DBC transaction of the subscriber (Spring's {@code TransactionalOperator}
 * or {@code @Transactional} with an {@code R2dbcTransactionManager}), so that the event commits with the reactive
 * work that caused it, or not at all. The row is the one {@link OutboxWriter} writes, by the same statement; the
 * relays read it the same way. Thread-safe.
 */
public final class R2dbcOutboxWriter {

    private static final String INSERT = R2dbcStatements.numbered(JdbcOutboxWriter.INSERT);

    private final DatabaseClient client;
    private final OutboxTracing tracing;

    private R2dbcOutboxWriter(DatabaseClient client, OutboxTracing tracing) {
        this.client = client;
        this.tracing = tracing;
    }

    public static R2dbcOutboxWriter create(DatabaseClient client) {
        return create(client, OutboxTracing.NONE);
    }

    /** As above; {@code tracing} carries the trace context current at {@link #append} with each event. */
    public static R2dbcOutboxWriter create(DatabaseClient client, OutboxTracing tracing) {
        return new R2dbcOutboxWriter(client, tracing);
    }

    /** Inserts {@code event} (with a new UUIDv7 id when it has none) when subscribed; emits the id. */
    public Mono<UUID> append(OutboxEvent event) {
        return Mono.defer(() -> {
            UUID id = event.id() != null ? event.id() : UuidV7.next();
            OutboxEvent e = tracing.capture(event.withId(id));
            DatabaseClient.GenericExecuteSpec spec = client.sql(INSERT).bind(0, id);
            spec = R2dbcStatements.bind(spec, 1, e.tenantId(), String.class);
            spec = R2dbcStatements.bind(spec, 2, e.actorId(), String.class);
            spec = R2dbcStatements.bind(spec, 3, e.aggregateType(), String.class);
            spec = R2dbcStatements.bind(spec, 4, e.aggregateId(), String.class);
            spec = R2dbcStatements.bind(spec, 5, e.eventType(), String.class);
            spec = spec.bind(6, e.eventVersion());
            spec = R2dbcStatements.bind(spec, 7, e.payload(), byte[].class);
            spec = R2dbcStatements.bind(spec, 8, e.contentType(), String.class);
            spec = R2dbcStatements.bind(spec, 9, e.headersJson(), String.class);
            return spec.then().thenReturn(id);
        });
    }
}
