package dev.once.relay.internal;

import dev.once.relay.EventTransport;
import dev.once.relay.OutboxMessage;
import dev.once.relay.RelayListener;
import dev.once.relay.RelayOptions;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowCallbackHandler;

/**
 * Internal to Once's relays; not an API. The outbox table's bookkeeping, shared by both relays: what happens to a row once Kafka has acknowledged or
 * refused it. Runs on the caller's connection and transaction.
 */
public final class OutboxLedger {

    private static final Logger log = LoggerFactory.getLogger(OutboxLedger.class);

    /**
     * Every relay statement is planned for the values it is given, in the transaction that sets this. A cached generic
     * plan is made once, from the statistics of the moment: an outbox that was nearly empty when last analysed and
     * holds a 100,000-row backlog now would get a sequential scan that compares every row with every id of the batch
     * (an array parameter is not hashed), and a drain slowed tenfold.
     */
    public static final String CUSTOM_PLANS = "SET LOCAL plan_cache_mode = force_custom_plan";

    public static final String DELETE_PUBLISHED = "DELETE FROM outbox_event WHERE id = ANY(?) RETURNING id";

    public static final String MARK_PUBLISHED = "UPDATE outbox_event SET published_at = now() WHERE id = ANY(?) RETURNING id";

    public static final String PARK = "UPDATE outbox_event SET parked_at = now(), park_reason = ? WHERE id = ?";

    private final JdbcTemplate jdbc;
    private final RelayOptions options;

    public OutboxLedger(JdbcTemplate jdbc, RelayOptions options) {
        this.jdbc = jdbc;
        this.options = options;
    }

    /**
     * Records what Kafka did with {@code sent}: published rows deleted or marked, refused rows parked with their
     * reason, and both reported to {@code listener} with each acknowledged row's commit-to-ack latency (up to
     * {@code acknowledgedAt}, when the send returned). Returns the acknowledged ids whose rows it did not find (see
     * {@link #settle}).
     */
    public Set<UUID> record(List<OutboxMessage> sent, EventTransport.Delivery delivery, Instant acknowledgedAt,
                            RelayListener listener) {
        Set<UUID> notFound = settle(delivery.acknowledged());
        for (Map.Entry<UUID, String> refused : delivery.refused().entrySet()) {
            String reason = refused.getValue();
            jdbc.update(PARK, reason.length() > 2000 ? reason.substring(0, 2000) : reason, refused.getKey());
        }
        reportLatency(sent, delivery, acknowledgedAt, listener);
        if (!delivery.acknowledged().isEmpty()) {
            listener.published(delivery.acknowledged().size());
        }
        delivery.refused().forEach((id, reason) -> {
            log.warn("Outbox event {} parked: {}", id, reason);
            listener.parked(reason);
        });
        return notFound;
    }

    /**
     * Deletes (or, with a retention period, marks) the rows of published events; returns the ids whose rows this
     * statement did not see. The polling relay always sees them. The CDC relay may not: a transaction's commit reaches
     * the replication stream as soon as it is flushed, a moment before the committing session makes it visible to
     * others, so a row can be published before a delete can see it. A row is also missing when an event is streamed
     * again after a restart and its row was already deleted.
     */
    public Set<UUID> settle(Collection<UUID> ids) {
        Set<UUID> notFound = new HashSet<>(ids);
        if (ids.isEmpty()) {
            return notFound;
        }
        jdbc.query(options.retention().isZero() ? DELETE_PUBLISHED : MARK_PUBLISHED,
                ps -> ps.setArray(1, ps.getConnection().createArrayOf("uuid", ids.toArray())),
                (RowCallbackHandler) rs -> notFound.remove(rs.getObject(1, UUID.class)));
        return notFound;
    }

    /** Reports commit-to-acknowledgement latency of every acknowledged message that knows its commit time. */
    private static void reportLatency(List<OutboxMessage> messages, EventTransport.Delivery delivery,
                                      Instant acknowledgedAt, RelayListener listener) {
        Set<UUID> acked = new HashSet<>(delivery.acknowledged());
        for (OutboxMessage m : messages) {
            if (m.committedAt() != null && acked.contains(m.id())) {
                listener.latency(Duration.between(m.committedAt(), acknowledgedAt));
            }
        }
    }

    public static Duration nextBackoff(Duration current, RelayOptions options) {
        Duration doubled = current.isZero() ? options.backoffMin() : current.multipliedBy(2);
        return doubled.compareTo(options.backoffMax()) > 0 ? options.backoffMax() : doubled;
    }
}
