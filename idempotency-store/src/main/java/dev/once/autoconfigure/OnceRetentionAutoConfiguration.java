package dev.once.autoconfigure;

import dev.once.OnceConfigurationException;
import dev.once.retention.RetentionListener;
import dev.once.retention.RetentionOptions;
import dev.once.retention.RetentionRule;
import dev.once.retention.RetentionSweeper;
import dev.once.spi.RunningLifecycle;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The retention sweep inside the service ({@link RetentionSweeper}), on by default ({@code once.retention.enabled}):
 * {@code idempotency_record} by {@link RetentionRule#idempotencyRecords}, and every other {@link RetentionRule}
 * bean the application or another of Once's modules defines (the {@code outbox_event} rule of the relay, or of
 * {@link OnceExternalRelayAutoConfiguration}). Metrics
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
