package dev.once.relay.autoconfigure;

import dev.once.outbox.OutboxOperations;
import dev.once.relay.OutboxRelay.RelayState;
import dev.once.relay.OutboxRelay;
import dev.once.wire.RecordSigning;
import java.time.Duration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The relay's health, as it is: DOWN when it should be publishing and is not (it failed, it backs off because Kafka
 * or PostgreSQL refuses it, or its oldest pending event is older than {@code max-pending-age}), with the reason; UP
 * while it publishes, and UP for a standby, which says it is one (its leader's health speaks for the relay).
 */
final class RelayHealthIndicator implements HealthIndicator {

    private final OutboxRelay relay;
    private final OutboxOperations status;
    private final Duration maxPendingAge;
    private final RecordSigning signing;

    RelayHealthIndicator(OutboxRelay relay, OutboxOperations status, Duration maxPendingAge, RecordSigning signing) {
        this.relay = relay;
        this.status = status;
        this.maxPendingAge = maxPendingAge;
        this.signing = signing;
    }

    @Override
    public Health health() {
        RelayState state = relay.state();
        Duration oldest = status.oldestPendingAge();
        boolean publishing = state.status() == RelayState.Status.RUNNING || state.status() == RelayState.Status.STARTING;
        boolean behind = publishing && oldest.compareTo(maxPendingAge) > 0;
        boolean up = state.status() == RelayState.Status.STANDBY || state.status() == RelayState.Status.STOPPED
                || (publishing && !behind);
        Health.Builder health = up ? Health.up() : Health.down();
        health.withDetail("state", state.status().name()).withDetail("detail", String.valueOf(state.detail()))
                .withDetail("pending", status.pending()).withDetail("parked", status.parkedCount())
                .withDetail("oldest-pending-age", oldest.toString()).withDetail("signing", signing.describe());
        if (!up && !behind) {
            health.withDetail("reason", String.valueOf(state.detail())); // e.g. Kafka refused the relay's credentials
        }
        if (behind) {
            health.withDetail("reason", "the oldest pending event is " + oldest.toSeconds() + " s old, more than "
                    + "once.outbox.relay.max-pending-age (" + maxPendingAge.toSeconds() + " s)");
        }
        return health.build();
    }
}
