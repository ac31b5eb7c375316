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
 * Internal to Once's relays; not an API. What happens to an outbox row once Kafka has acknowledged or refused its
 * event: the polling relay deletes or marks what Kafka acknowledged ({@link #record}); both relays park what Kafka
 * refused, with the events of its aggregate behind it ({@link #park}), and report what they published
 * ({@link #report}). Runs on the caller's connection and transaction.
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

    /** Parks a row, unless it is parked already (with the reason it was parked for first). */
    public static final String PARK = """
            UPDATE outbox_event SET parked_at = now(), park_reason = ? WHERE id = ? AND parked_at IS NULL
            """;

    /** The reason a row is parked for when it waits behind a parked event of its aggregate. */
    public static String behind(String aggregate) {
        return "waiting behind a parked event of " + aggregate;
    }

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
        park(delivery.refused());
        report(sent, delivery, acknowledgedAt, listener);
        return notFound;
    }

    /**
     * Parks each of {@code rows} (id to reason) that is not parked yet; returns the ids whose rows this transaction
     * did not find. Kafka's reasons are cut to 2,000 characters.
     */
    public Set<UUID> park(Map<UUID, String> rows) {
        Set<UUID> notFound = new HashSet<>();
        rows.forEach((id, reason) -> {
            if (jdbc.update(PARK, reason.length() > 2000 ? reason.substring(0, 2000) : reason, id) == 0
                    && jdbc.queryForList(PARKED, Boolean.class, id).isEmpty()) {
                notFound.add(id);
            }
        });
        return notFound;
    }

    static final String PARKED = "SELECT true FROM outbox_event WHERE id = ? AND parked_at IS NOT NULL";

    static final String PARKED_AGGREGATES = """
            SELECT DISTINCT aggregate_type || '/' || aggregate_id FROM outbox_event
            WHERE parked_at IS NOT NULL AND aggregate_type || '/' || aggregate_id = ANY(?)
            """;

    /** Which of {@code aggregates} ({@code type/id}) have a parked event: their later events wait behind it. */
    public Set<String> parkedAggregates(Collection<String> aggregates) {
        Object[] distinct = aggregates.stream().distinct().toArray();
        return new HashSet<>(jdbc.query(PARKED_AGGREGATES, ps -> ps.setArray(1,
                ps.getConnection().createArrayOf("text", distinct)), (rs, n) -> rs.getString(1)));
    }

    /**
     * Reports to {@code listener} what Kafka did with {@code sent}: the events published, each one's commit-to-ack
     * latency (up to {@code acknowledgedAt}, when the send returned), and the events parked, which it also logs.
     */
    public static void report(List<OutboxMessage> sent, EventTransport.Delivery delivery, Instant acknowledgedAt,
                              RelayListener listener) {
        reportLatency(sent, delivery, acknowledgedAt, listener);
        if (!delivery.acknowledged().isEmpty()) {
            listener.published(delivery.acknowledged().size());
        }
        delivery.refused().forEach((id, reason) -> {
            log.warn("Outbox event {} parked: {}", id, reason);
            listener.parked(reason);
        });
    }

    /**
     * Deletes (or, with a retention period, marks) the rows of published events, which the polling relay read in the
     * same transaction; returns the ids whose rows this statement did not see.
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
}
