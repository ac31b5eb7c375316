package dev.once.relay;

import dev.once.wire.OutboxMessage;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.slf4j.LoggerFactory;

/**
 * Where relayed messages go: Kafka in production ({@link KafkaTransport}), behind this one-method interface so that
 * the relays' logic reads on its own. Thread-safe.
 */
public interface EventTransport extends AutoCloseable {

    /**
     * Sends {@code messages} in order and waits until each is acknowledged or refused.
     *
     * @return the ids that were acknowledged, and the ids refused outright with their reasons; a message refused
     *         outright is never sent again by the relay (it is parked), and the later messages of its aggregate in
     *         {@code messages} are not sent
     * @throws TransportUnavailableException when the broker could not be reached or did not acknowledge in time: the
     *         relay keeps the batch pending and retries it, so some of it may be delivered twice
     */
    Delivery send(List<OutboxMessage> messages);

    /**
     * Checks that the broker answers and accepts this transport's credentials, before anything needs sending: a relay
     * calls it when it starts, so that its health is not UP while it could publish nothing. The default checks
     * nothing.
     *
     * @throws TransportUnavailableException when the broker does not answer, or refuses (a
     *         {@link KafkaRefusedException})
     */
    default void verify() {
    }

    @Override
    void close();

    /** The outcome of one {@link #send}. */
    record Delivery(List<UUID> acknowledged, Map<UUID, String> refused) {

        /**
         * Reports to {@code listener} what Kafka did with {@code sent}: the events published, the commit-to-ack
         * latency of each that knows its commit time (up to {@code acknowledgedAt}, when the send returned), and the
         * events parked, which it also logs.
         */
        public void report(List<OutboxMessage> sent, Instant acknowledgedAt, RelayListener listener) {
            Set<UUID> acked = new HashSet<>(acknowledged);
            for (OutboxMessage m : sent) {
                if (m.committedAt() != null && acked.contains(m.id())) {
                    listener.latency(Duration.between(m.committedAt(), acknowledgedAt));
                }
            }
            if (!acknowledged.isEmpty()) {
                listener.published(acknowledged.size());
            }
            refused.forEach((id, reason) -> {
                LoggerFactory.getLogger(EventTransport.class).warn("Outbox event {} parked: {}", id, reason);
                listener.parked(reason);
            });
        }
    }
}
