package dev.once.autoconfigure;

import dev.once.retention.RetentionOptions;
import dev.once.retention.RetentionRule;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code once.retention.*}: the sweep that keeps Once's tables bounded inside the service. Defaults are
 * {@link RetentionOptions} and {@link RetentionRule#GRACE}.
 */
@ConfigurationProperties("once.retention")
public class OnceRetentionProperties {

    /**
     * Whether the service sweeps Once's tables itself: records past their TTL or claim retention (and the grace),
     * and published outbox rows past once.outbox.relay.retention. Off, nothing deletes them but core.
     */
    private boolean enabled = true;

    /** How often a round starts. One instance sweeps each table at a time; the others measure. */
    private Duration interval = RetentionOptions.INTERVAL;

    /** Rows deleted per statement, each statement its own short transaction. */
    private int batchSize = RetentionOptions.BATCH_SIZE;

    /** Pause between two batches of a round, so that a backlog never crowds out the request path. */
    private Duration pause = RetentionOptions.PAUSE;

    /**
     * How long a record is kept past its expiry before it is deleted. Its key may be claimed again meanwhile, and
     * core idempotency diagnose still reports it as expired.
     */
    private Duration grace = RetentionRule.GRACE;

    /** Health is DOWN while the oldest row due has waited longer than this: the sweep does not keep up. */
    private Duration maxOverdue = RetentionOptions.MAX_OVERDUE;

    public RetentionOptions toOptions() {
        return new RetentionOptions(interval, batchSize, pause, maxOverdue);
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Duration getInterval() {
        return interval;
    }

    public void setInterval(Duration interval) {
        this.interval = interval;
    }

    public int getBatchSize() {
        return batchSize;
    }

    public void setBatchSize(int batchSize) {
        this.batchSize = batchSize;
    }

    public Duration getPause() {
        return pause;
    }

    public void setPause(Duration pause) {
        this.pause = pause;
    }

    public Duration getGrace() {
        return grace;
    }

    public void setGrace(Duration grace) {
        this.grace = grace;
    }

    public Duration getMaxOverdue() {
        return maxOverdue;
    }

    public void setMaxOverdue(Duration maxOverdue) {
        this.maxOverdue = maxOverdue;
    }
}
