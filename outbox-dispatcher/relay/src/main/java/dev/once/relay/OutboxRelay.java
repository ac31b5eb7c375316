package dev.once.relay;

/**
 * Moves every committed outbox row to Kafka: once per row in normal operation, at least once after a crash, in order
 * within each aggregate. Two implementations share this contract: {@link PollingRelay} and the CDC relay.
 */
public interface OutboxRelay extends AutoCloseable {

    /** Starts relaying on a thread of its own; returns once the relay is ready. */
    void start();

    /** Stops relaying and waits for the current batch to finish or roll back. */
    @Override
    void close();

    /** What the relay is doing, for health checks and operators. */
    RelayState state();

    /** A relay's state and, when it failed, why. */
    record RelayState(Status status, String detail) {

        public enum Status { STARTING, RUNNING, STANDBY, BACKING_OFF, FAILED, STOPPED }
    }
}
