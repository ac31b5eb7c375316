package dev.once.autoconfigure;

import dev.once.spi.SlotWatermarks;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code once.outbox.relay.slot.*}: the watermarks by which rows leave the outbox once the replication slot that relays
 * them has confirmed them, with the CDC relay and with Kafka Connect alike. Defaults: {@link SlotWatermarks.Options}.
 */
@ConfigurationProperties("once.outbox.relay.slot")
public class OnceSlotProperties {

    /** How often a watermark is taken and checked against the slot, and the rows it confirmed leave the outbox. */
    private Duration watermarkInterval = SlotWatermarks.Options.INTERVAL;

    /** Health is DOWN while the newest watermark the slot confirmed is older than this: its position stopped. */
    private Duration maxLag = SlotWatermarks.Options.MAX_LAG;

    /** The watermarks' options, keeping rows {@code retention} ({@code once.outbox.relay.retention}). */
    public SlotWatermarks.Options toOptions(Duration retention) {
        try {
            return SlotWatermarks.Options.ofDefaults().withInterval(watermarkInterval).withMaxLag(maxLag)
                    .withRetention(retention);
        } catch (IllegalArgumentException e) {
            throw new dev.once.OnceConfigurationException("once.outbox.relay.slot.* is invalid: " + e.getMessage(),
                    "Set once.outbox.relay.slot.watermark-interval to a positive duration and max-lag to zero or more");
        }
    }

    public Duration getWatermarkInterval() {
        return watermarkInterval;
    }

    public void setWatermarkInterval(Duration watermarkInterval) {
        this.watermarkInterval = watermarkInterval;
    }

    public Duration getMaxLag() {
        return maxLag;
    }

    public void setMaxLag(Duration maxLag) {
        this.maxLag = maxLag;
    }
}
