package dev.once.autoconfigure;

import dev.once.spi.SlotWatermarks;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import javax.sql.DataSource;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The replication slot that relays the outbox, for every relay that reads the WAL, whose {@link SlotWatermarks} the
 * CDC relay's autoconfiguration or {@link OnceExternalRelayAutoConfiguration} defines: the slot's health ({@link SlotHealthIndicator}) and the metrics {@code once.outbox.slot.lag} (bytes) and
 * {@code once.outbox.slot.lag.time} (seconds since the newest watermark the slot confirmed was taken).
 */
@AutoConfiguration(after = {OnceStoreAutoConfiguration.class, OnceExternalRelayAutoConfiguration.class},
        afterName = "dev.once.relay.cdc.autoconfigure.OnceCdcRelayAutoConfiguration")
@ConditionalOnBean({DataSource.class, OnceSchema.class})
public class OnceSlotAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterBinder.class)
    static class SlotMetrics {

        @Bean
        @ConditionalOnBean(SlotWatermarks.class)
        @ConditionalOnMissingBean(name = "onceSlotMetrics")
        MeterBinder onceSlotMetrics(SlotWatermarks watermarks) {
            return registry -> {
                Gauge.builder("once.outbox.slot.lag", watermarks, w -> w.status().lagBytes()).baseUnit("bytes")
                        .description("WAL bytes the relay's replication slot has not confirmed")
                        .tag("slot", watermarks.slotName()).register(registry);
                Gauge.builder("once.outbox.slot.lag.time", watermarks, w -> {
                    Duration lag = w.status().lag();
                    return lag == null ? Double.NaN : lag.toMillis() / 1000.0;
                }).baseUnit("seconds").description("How long ago the newest watermark the slot confirmed was taken")
                        .tag("slot", watermarks.slotName()).register(registry);
            };
        }
    }

    /** {@code /actuator/health}: the slot as it is ({@link SlotHealthIndicator}). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    static class SlotHealth {

        @Bean
        @ConditionalOnBean(SlotWatermarks.class)
        @ConditionalOnMissingBean(name = "onceOutboxSlotHealthIndicator")
        HealthIndicator onceOutboxSlotHealthIndicator(SlotWatermarks watermarks) {
            return new SlotHealthIndicator(watermarks);
        }
    }
}
