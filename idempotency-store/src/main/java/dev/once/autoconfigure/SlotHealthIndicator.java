package dev.once.autoconfigure;

import dev.once.outbox.OutboxOperations;
import dev.once.spi.SlotWatermarks;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The replication slot that relays the outbox, as PostgreSQL shows it: DOWN, with the reason and its fix, while it is
 * missing, belongs to another database, was invalidated, is not streamed, or has confirmed no watermark for longer
 * than its longest lag (its position stopped moving while the WAL grew); UP otherwise. Rows leave the outbox only while
 * it is UP.
 */
final class SlotHealthIndicator implements HealthIndicator {

    private final SlotWatermarks watermarks;

    SlotHealthIndicator(SlotWatermarks watermarks) {
        this.watermarks = watermarks;
    }

    @Override
    public Health health() {
        OutboxOperations.Slot slot = watermarks.status();
        String problem = slot.problem(watermarks.options().maxLag());
        Health.Builder health = problem == null ? Health.up() : Health.down().withDetail("reason", problem);
        health.withDetail("slot", slot.name()).withDetail("state", slot.state().name())
                .withDetail("lag-bytes", slot.lagBytes());
        if (slot.walStatus() != null) {
            health.withDetail("wal-status", slot.walStatus());
        }
        if (slot.lag() != null) {
            health.withDetail("lag", slot.lag().toString());
        }
        return health.build();
    }
}
