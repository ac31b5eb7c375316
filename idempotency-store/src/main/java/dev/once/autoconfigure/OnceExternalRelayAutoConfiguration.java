package dev.once.autoconfigure;

import dev.once.OnceConfigurationException;
import dev.once.spi.SlotWatermarks;
import dev.once.retention.RetentionRule;
import dev.once.spi.RunningLifecycle;
import java.time.Duration;
import javax.sql.DataSource;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * {@code once.outbox.relay.mode=external}: a relay outside the application (Kafka Connect with once-connect) publishes
 * the outbox, and none runs here. Its replication slot, named by {@code once.outbox.relay.external.slot-name}, decides
 * when a row is published: rows leave once the slot confirmed them ({@link SlotWatermarks}), after
 * {@code once.outbox.relay.retention}, and none while the slot is missing, lost or idle.
 */
@AutoConfiguration(after = OnceStoreAutoConfiguration.class)
@ConditionalOnBean({DataSource.class, OnceSchema.class})
@ConditionalOnProperty(name = "once.outbox.relay.mode", havingValue = "external")
@EnableConfigurationProperties({OnceExternalRelayProperties.class, OnceSlotProperties.class})
public class OnceExternalRelayAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    SlotWatermarks onceSlotWatermarks(DataSource dataSource, OnceExternalRelayProperties properties,
                                      OnceSlotProperties slot, Environment environment) {
        if (properties.getSlotName().isBlank()) {
            throw new OnceConfigurationException("once.outbox.relay.mode=external, and no replication slot names "
                    + "the connector that relays the outbox: rows leave the outbox only once that slot has "
                    + "confirmed them", "Set once.outbox.relay.external.slot-name to the slot.name of the "
                    + "Debezium connector (see docs/SCALING.md)");
        }
        return new SlotWatermarks(dataSource, properties.getSlotName(), slot.toOptions(retention(environment)));
    }

    @Bean
    @ConditionalOnMissingBean(name = "onceSlotWatermarksLifecycle")
    SmartLifecycle onceSlotWatermarksLifecycle(SlotWatermarks watermarks) {
        return RunningLifecycle.of(watermarks::start, watermarks::close);
    }

    /** Rows marked published once confirmed, kept {@code once.outbox.relay.retention}, then deleted. */
    @Bean
    @ConditionalOnMissingBean(name = "onceOutboxRetentionRule")
    RetentionRule onceOutboxRetentionRule(Environment environment) {
        return RetentionRule.publishedOutboxEvents(retention(environment));
    }

    private static Duration retention(Environment environment) {
        try {
            return Binder.get(environment).bind("once.outbox.relay.retention", Duration.class)
                    .orElse(RetentionRule.OUTBOX_RETENTION);
        } catch (RuntimeException e) {
            throw new OnceConfigurationException("once.outbox.relay.retention is invalid: " + e.getMessage(),
                    "Set it to a duration of zero or more, e.g. 0s (delete rows once published) or 7d");
        }
    }
}
