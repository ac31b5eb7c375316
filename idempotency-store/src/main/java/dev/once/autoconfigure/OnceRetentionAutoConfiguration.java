package dev.once.autoconfigure;

import dev.once.OnceConfigurationException;
import dev.once.internal.RunningLifecycle;
import dev.once.retention.RetentionListener;
import dev.once.retention.RetentionOptions;
import dev.once.retention.RetentionRule;
import dev.once.retention.RetentionSweeper;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The retention sweep inside the service ({@link RetentionSweeper}), on by default ({@code once.retention.enabled}):
 * {@code idempotency_record} by {@link RetentionRule#idempotencyRecords}, and every other {@link RetentionRule}
 * bean the application or another of Once's modules defines (the relay's {@code outbox_event} rule). Metrics
 * {@code once.retention.swept}, {@code once.retention.overdue} and {@code once.retention.failures}, tagged by table,
 * when Micrometer is present; a health indicator when Boot's health is.
 */
@AutoConfiguration(after = OnceStoreAutoConfiguration.class)
@ConditionalOnBean({DataSource.class, OnceSchema.class})
@ConditionalOnBooleanProperty(name = "once.retention.enabled", matchIfMissing = true)
@EnableConfigurationProperties(OnceRetentionProperties.class)
public class OnceRetentionAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    RetentionSweeper onceRetentionSweeper(DataSource dataSource, OnceSchema schema, OnceRetentionProperties properties,
                                          ObjectProvider<RetentionRule> rules, ObjectProvider<RetentionListener> listener) {
        RetentionOptions options;
        List<RetentionRule> all = new ArrayList<>();
        try {
            options = properties.toOptions();
            all.add(RetentionRule.idempotencyRecords(properties.getGrace()));
        } catch (IllegalArgumentException e) {
            throw new OnceConfigurationException("once.retention.* is invalid: " + e.getMessage(),
                    "Set once.retention.interval, batch-size, pause, grace and max-overdue to positive values");
        }
        rules.orderedStream().forEach(all::add);
        return new RetentionSweeper(dataSource, options, all, listener.getIfAvailable(() -> RetentionListener.NONE));
    }

    @Bean
    @ConditionalOnMissingBean(name = "onceRetentionLifecycle")
    SmartLifecycle onceRetentionLifecycle(RetentionSweeper sweeper) {
        return RunningLifecycle.of(sweeper::start, sweeper::close);
    }

    /**
     * {@code once.outbox.relay.mode=external}: a relay outside the application (Kafka Connect reading the WAL)
     * publishes the outbox and marks nothing, so rows are deleted by age: appended longer ago than
     * {@code once.outbox.relay.retention} ({@link RetentionRule#OUTBOX_RETENTION} by default: at the next sweep).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(name = "once.outbox.relay.mode", havingValue = "external")
    static class ExternalRelay {

        @Bean
        @ConditionalOnMissingBean(name = "onceOutboxRetentionRule")
        RetentionRule onceOutboxRetentionRule(Environment environment) {
            try {
                return RetentionRule.appendedOutboxEvents(Binder.get(environment)
                        .bind("once.outbox.relay.retention", Duration.class).orElse(RetentionRule.OUTBOX_RETENTION));
            } catch (RuntimeException e) {
                throw new OnceConfigurationException("once.outbox.relay.retention is invalid: " + e.getMessage(),
                        "Set it to a duration of zero or more, e.g. 0s (delete rows at the next sweep) or 1h");
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    static class RetentionMetering {

        @Bean
        @ConditionalOnMissingBean
        RetentionListener onceRetentionListener(ObjectProvider<MeterRegistry> registries) {
            MeterRegistry registry = registries.getIfAvailable();
            return registry == null ? RetentionListener.NONE : new RetentionMetrics(registry);
        }
    }

    /** {@code /actuator/health} says whether the sweep keeps up ({@link RetentionHealthIndicator}). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    static class RetentionHealth {

        @Bean
        @ConditionalOnMissingBean(name = "onceRetentionHealthIndicator")
        HealthIndicator onceRetentionHealthIndicator(RetentionSweeper sweeper) {
            return new RetentionHealthIndicator(sweeper);
        }
    }
}
