package dev.once.dispatch.autoconfigure;

import dev.once.dispatch.DispatchListener;
import dev.once.dispatch.EventDispatcher;
import dev.once.dispatch.HandlerRegistration;
import dev.once.dispatch.KafkaEventDispatcher;
import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.IdempotencyStore;
import dev.once.idempotency.OnceMigrations;
import io.micrometer.core.instrument.MeterRegistry;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.SmartLifecycle;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * Runs the exactly-once Kafka handlers ({@code once.dispatcher.*}). Handlers are declared as plain beans of type
 * {@link HandlerRegistration}, e.g. {@code @Bean HandlerRegistration accountProjection() { return
 * HandlerRegistration.transactional("AccountCreated", 1, "account-projection", event -> ...); }}. The consumers start
 * when {@code once.dispatcher.topics} is set. Every bean backs off when the application defines its own.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
        "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
        "dev.once.guard.autoconfigure.OnceIdempotencyAutoConfiguration"})
@ConditionalOnBean({DataSource.class, PlatformTransactionManager.class})
@ConditionalOnProperty(prefix = "once.dispatcher", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(OnceDispatcherProperties.class)
public class OnceDispatcherAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    IdempotencyStore idempotencyStore(DataSource dataSource) {
        OnceMigrations.migrate(dataSource);
        return IdempotencyStore.create(dataSource);
    }

    @Bean
    @ConditionalOnMissingBean
    DispatchListener onceDispatchListener(ObjectProvider<MeterRegistry> registries) {
        MeterRegistry registry = registries.getIfAvailable();
        return registry == null ? DispatchListener.NONE : new DispatchMetrics(registry);
    }

    @Bean
    @ConditionalOnMissingBean
    EventDispatcher onceEventDispatcher(IdempotencyStore store, PlatformTransactionManager transactions,
                                        ObjectProvider<HandlerRegistration> handlers, DispatchListener listener,
                                        OnceDispatcherProperties properties) {
        return new EventDispatcher(store, transactions, handlers.orderedStream().toList(),
                ClaimPolicy.custom().lease(properties.getLease()).build(), listener);
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnProperty(prefix = "once.dispatcher", name = "topics")
    KafkaEventDispatcher onceKafkaEventDispatcher(EventDispatcher dispatcher, OnceDispatcherProperties properties,
                                                  ObjectProvider<MeterRegistry> registries, Environment environment) {
        String bootstrap = properties.getBootstrapServers().isBlank()
                ? environment.getProperty("spring.kafka.bootstrap-servers", "localhost:9092")
                : properties.getBootstrapServers();
        return new KafkaEventDispatcher(bootstrap, properties.getGroupId(), dispatcher, properties.getConcurrency(),
                properties.toRetryPolicy(), registries.getIfAvailable(), properties.getTopics().toArray(String[]::new));
    }

    @Bean
    @ConditionalOnBean(KafkaEventDispatcher.class)
    @ConditionalOnMissingBean(name = "onceKafkaEventDispatcherLifecycle")
    SmartLifecycle onceKafkaEventDispatcherLifecycle(KafkaEventDispatcher consumers) {
        return new SmartLifecycle() {
            private volatile boolean running;

            @Override
            public void start() {
                consumers.start();
                running = true;
            }

            @Override
            public void stop() {
                consumers.close();
                running = false;
            }

            @Override
            public boolean isRunning() {
                return running;
            }
        };
    }

    /** {@code /actuator/health} shows the dispatcher: up while its consumers run, down once they stopped. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    @ConditionalOnProperty(prefix = "once.dispatcher", name = "topics") // as the consumers themselves
    static class DispatcherHealth {

        @Bean
        @ConditionalOnMissingBean(name = "onceDispatcherHealthIndicator")
        HealthIndicator onceDispatcherHealthIndicator(KafkaEventDispatcher consumers, OnceDispatcherProperties properties) {
            return () -> (consumers.isRunning() ? Health.up() : Health.down())
                    .withDetail("group", properties.getGroupId())
                    .withDetail("topics", properties.getTopics())
                    .withDetail("assigned-consumers", consumers.assignedConsumers()).build();
        }
    }
}
