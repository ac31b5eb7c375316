package dev.once.outbox;

import java.util.UUID;
import javax.sql.DataSource;

/**
 * Writes outbox rows inside the caller's transaction, so an event exists if and only if the business change that
 * raised it committed. Thread-safe.
 */
public interface OutboxWriter {

    static OutboxWriter create(DataSource dataSource) {
        return create(dataSource, OutboxTracing.NONE);
    }

    /** A writer that carries the trace context current at each append with the event ({@link OutboxTracing}). */
    static OutboxWriter create(DataSource dataSource, OutboxTracing tracing) {
        return new JdbcOutboxWriter(dataSource, tracing, OutboxEvent.defaultMapper());
    }

    /**
     * As above, and {@link #event()}'s builders serialise object payloads with {@code json}: the application's
     * {@code JsonMapper} (Spring Boot's configured one), so that its naming strategy, modules and serializers apply.
     */
    static OutboxWriter create(DataSource dataSource, OutboxTracing tracing, tools.jackson.databind.json.JsonMapper json) {
        return new JdbcOutboxWriter(dataSource, tracing, json);
    }

    /** A builder whose {@link OutboxEvent.Builder#payload(Object)} serialises with this writer's {@code JsonMapper}. */
    default OutboxEvent.Builder event() {
        return OutboxEvent.builder();
    }

    /**
     * Inserts {@code event} in the current Spring-managed transaction (JPA or JDBC) and returns its id.
     *
     * @throws OutboxTransactionException when no transaction is active: an outbox row must never autocommit apart
     *         from the change it describes
     */
    UUID append(OutboxEvent event);
}
