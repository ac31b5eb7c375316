package dev.once.outbox;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The outbox as operators see it, and what they may do to it: pending rows, the oldest pending row's age, parked rows
 * with their reasons, a replication slot's activity and lag, and the redrive of a parked event. Every figure is read
 * from PostgreSQL when asked. Thread-safe.
 */
public interface OutboxOperations {

    /** The operations over {@code dataSource}, whose schema {@code OnceMigrations.migrate} has created. */
    static OutboxOperations create(DataSource dataSource) {
        return new JdbcOutboxOperations(dataSource);
    }

    /** How many rows wait to be published (neither published nor parked). */
    long pending();

    /** The age of the oldest pending row, or zero when nothing is pending. */
    Duration oldestPendingAge();

    /** How many rows are parked, waiting for an operator. */
    long parkedCount();

    /** The first {@code limit} parked rows, oldest first. */
    List<Parked> parked(int limit);

    /** The replication slot {@code slotName}, or {@code null} when it does not exist (yet). */
    Slot slot(String slotName);

    /**
     * Sends a parked event through the relay again. In one transaction, the parked event and every unpublished event
     * behind it in its aggregate are written anew in their order (same ids, new {@code seq}, not parked): the CDC
     * relay sees them as inserts, the polling relay as pending rows, and the aggregate keeps its order. If Kafka
     * refuses the event again, it is parked again.
     *
     * @return how many rows were re-queued; 0 when the event is not parked
     */
    int redrive(UUID eventId);

    /** A parked event and why it was parked. */
    record Parked(UUID id, String aggregateType, String aggregateId, String eventType, String reason, Instant parkedAt) {
    }

    /** A replication slot's state: whether a relay streams from it, and how many WAL bytes it has not confirmed. */
    record Slot(String name, boolean active, long lagBytes) {
    }
}
