package dev.once.relay;

import java.util.List;
import java.util.Map;
import java.util.UUID;

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
    }
}
