package dev.once.autoconfigure;

import dev.once.retention.RetentionSweeper.TableStatus;
import dev.once.retention.RetentionSweeper;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * Whether the retention sweep keeps up, table by table, as the last round measured it: DOWN while the oldest row due
 * has waited longer than {@code once.retention.max-overdue} (the sweep falls behind and the table grows), or while
 * its last round failed; UP otherwise, also on an instance that measures while another one sweeps.
 */
final class RetentionHealthIndicator implements HealthIndicator {

    private final RetentionSweeper sweeper;

    RetentionHealthIndicator(RetentionSweeper sweeper) {
        this.sweeper = sweeper;
    }

    @Override
    public Health health() {
        Duration limit = sweeper.options().maxOverdue();
        List<String> reasons = new ArrayList<>();
        Map<String, Object> tables = new LinkedHashMap<>();
        for (TableStatus table : sweeper.status()) {
            Map<String, Object> detail = new LinkedHashMap<>();
            detail.put("overdue", String.valueOf(table.overdue()));
            detail.put("checked-at", table.checkedAt().toString());
            if (table.failure() != null) {
                detail.put("failure", table.failure());
                reasons.add("the last sweep of " + table.table() + " failed: " + table.failure());
            } else if (table.overdue().compareTo(limit) > 0) {
                reasons.add("the oldest row of " + table.table() + " due for deletion has waited " + table.overdue().toSeconds()
                        + " s, more than once.retention.max-overdue (" + limit.toSeconds() + " s)");
            }
            tables.put(table.table(), detail);
        }
        Health.Builder health = reasons.isEmpty() ? Health.up() : Health.down().withDetail("reason", String.join("; ", reasons));
        return health.withDetail("tables", tables).build();
    }
}
