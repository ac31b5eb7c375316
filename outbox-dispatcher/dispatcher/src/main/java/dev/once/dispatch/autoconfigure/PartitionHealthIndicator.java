package dev.once.dispatch.autoconfigure;

import dev.once.idempotency.ClaimPartitions;
import java.time.Duration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * Whether the claims' partitions are kept, as the last round found them: DOWN when that round failed, when not even
 * tomorrow has its partition (claims are then placed in days created on demand, and creation has fallen behind), or
 * when a day due to be dropped has waited more than {@link #MAX_OVERDUE}; UP otherwise.
 */
final class PartitionHealthIndicator implements HealthIndicator {

    /** How long a day past the retention may wait for its drop before health says so. */
    static final Duration MAX_OVERDUE = Duration.ofHours(6);

    private final ClaimPartitions partitions;

    PartitionHealthIndicator(ClaimPartitions partitions) {
        this.partitions = partitions;
    }

    @Override
    public Health health() {
        ClaimPartitions.Status status = partitions.status();
        if (status == null) {
            return Health.unknown().withDetail("reason", "no round has run yet").build();
        }
        String reason = status.failure() != null ? "the last round failed: " + status.failure()
                : status.daysAhead() < 1 ? "tomorrow has no partition yet (days ahead: " + status.daysAhead() + ")"
                : status.overdue().compareTo(MAX_OVERDUE) > 0 ? "a day past the claim retention has waited "
                        + status.overdue().toMinutes() + " min to be dropped" : null;
        Health.Builder health = reason == null ? Health.up() : Health.down().withDetail("reason", reason);
        return health.withDetail("days-ahead", status.daysAhead())
                .withDetail("created-on-demand", status.createdOnDemand())
                .withDetail("overdue", status.overdue().toString())
                .withDetail("checked-at", status.checkedAt().toString()).build();
    }
}
