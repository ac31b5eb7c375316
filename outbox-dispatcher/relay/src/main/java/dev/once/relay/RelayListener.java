package dev.once.relay;

import java.time.Duration;

/** Observes a relay; the default does nothing. Micrometer binding lives in the autoconfiguration. Thread-safe. */
public interface RelayListener {

    RelayListener NONE = new RelayListener() { };

    /** {@code count} messages were acknowledged by Kafka. */
    default void published(int count) {
    }

    /** One message went from commit to Kafka acknowledgement in {@code latency}. */
    default void latency(Duration latency) {
    }

    /** A message was parked with {@code reason}. */
    default void parked(String reason) {
    }

    /** Kafka was unavailable; the relay retries after {@code pause}. */
    default void unavailable(Throwable cause, Duration pause) {
    }

    /** The relay stopped because of {@code failure}; it does not stall silently. */
    default void failed(Throwable failure) {
    }
}
