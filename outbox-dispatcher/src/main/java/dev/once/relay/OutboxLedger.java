package dev.once.relay;

import java.sql.Array;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The outbox table's bookkeeping, shared by both relays: what happens to a row once Kafka has acknowledged or
 * refused it, and the retention cleanup. Runs on the caller's connection and transaction.
 */
final class OutboxLedger {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(OutboxLedger.class);

    static final String DELETE_PUBLISHED = "DELETE FROM outbox_event WHERE id = ANY(?)";

    static final String MARK_PUBLISHED = "UPDATE outbox_event SET published_at = now() WHERE id = ANY(?)";

    static final String PARK = "UPDATE outbox_event SET parked_at = now(), park_reason = ? WHERE id = ?";

    static final String CLEANUP_BATCH = """
            DELETE FROM outbox_event WHERE id IN (
                SELECT id FROM outbox_event
                WHERE published_at IS NOT NULL AND published_at <= now() - CAST(? AS bigint) * interval '1 millisecond'
                ORDER BY published_at
                LIMIT ?
                FOR UPDATE SKIP LOCKED)
            """;

    private final JdbcTemplate jdbc;
    private final RelayOptions options;

    OutboxLedger(JdbcTemplate jdbc, RelayOptions options) {
        this.jdbc = jdbc;
        this.options = options;
    }

    /**
     * Records what Kafka did with {@code sent}: published rows deleted or marked, refused rows parked with their
     * reason, and both reported to {@code listener} with each acknowledged row's commit-to-ack latency.
     */
    void record(List<OutboxMessage> sent, EventTransport.Delivery delivery, RelayListener listener) {
        record(delivery);
        reportLatency(sent, delivery, listener);
        if (!delivery.acknowledged().isEmpty()) {
            listener.published(delivery.acknowledged().size());
        }
        delivery.refused().forEach((id, reason) -> {
            log.warn("Outbox event {} parked: {}", id, reason);
            listener.parked(reason);
        });
    }

    private void record(EventTransport.Delivery delivery) {
        List<UUID> done = delivery.acknowledged();
        if (!done.isEmpty()) {
            String sql = options.retention().isZero() ? DELETE_PUBLISHED : MARK_PUBLISHED;
            jdbc.update(sql, ps -> {
                Array ids = ps.getConnection().createArrayOf("uuid", done.toArray());
                ps.setArray(1, ids);
            });
        }
        for (Map.Entry<UUID, String> refused : delivery.refused().entrySet()) {
            String reason = refused.getValue();
            jdbc.update(PARK, reason.length() > 2000 ? reason.substring(0, 2000) : reason, refused.getKey());
        }
    }

    /** Deletes published rows past the retention period in bounded batches; returns how many. */
    long cleanup() {
        if (options.retention().isZero()) {
            return 0;
        }
        long total = 0;
        int rows;
        do {
            rows = jdbc.update(CLEANUP_BATCH, options.retention().toMillis(), options.cleanupBatchSize());
            total += rows;
        } while (rows == options.cleanupBatchSize());
        return total;
    }

    /** Reports commit-to-acknowledgement latency of every acknowledged message that knows its commit time. */
    private static void reportLatency(List<OutboxMessage> messages, EventTransport.Delivery delivery, RelayListener listener) {
        java.time.Instant now = java.time.Instant.now();
        java.util.Set<UUID> acked = new java.util.HashSet<>(delivery.acknowledged());
        for (OutboxMessage m : messages) {
            if (m.committedAt() != null && acked.contains(m.id())) {
                listener.latency(Duration.between(m.committedAt(), now));
            }
        }
    }

    static Duration nextBackoff(Duration current, RelayOptions options) {
        Duration doubled = current.isZero() ? options.backoffMin() : current.multipliedBy(2);
        return doubled.compareTo(options.backoffMax()) > 0 ? options.backoffMax() : doubled;
    }
}
