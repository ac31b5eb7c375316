package dev.once.relay.autoconfigure;

import dev.once.relay.CdcRelay;
import dev.once.relay.CdcSettings;
import dev.once.relay.EventTransport;
import dev.once.relay.KafkaTransport;
import dev.once.relay.OutboxRelay;
import dev.once.outbox.OutboxStatus;
import dev.once.relay.PollingRelay;
import dev.once.relay.RelayListener;
import dev.once.relay.TopicRouter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.HashMap;
import java.util.Map;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Runs the outbox relay in a Spring Boot application ({@code once.outbox.relay.*}): the CDC relay by default, the
 * polling relay with {@code mode=polling}. It starts after the context is ready and stops before the DataSource
 * closes. Every bean backs off when the application defines its own.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "dev.once.guard.autoconfigure.OnceIdempotencyAutoConfiguration"})
@ConditionalOnBean(DataSource.class)
@ConditionalOnProperty(prefix = "once.outbox.relay", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(OnceRelayProperties.class)
public class OnceRelayAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    TopicRouter onceTopicRouter(OnceRelayProperties properties) {
        return TopicRouter.byAggregateType(properties.getTopicPrefix());
    }

    @Bean
    @ConditionalOnMissingBean
    EventTransport onceEventTransport(OnceRelayProperties properties, TopicRouter router, Environment environment) {
        Map<String, Object> producer = new HashMap<>(properties.getProducer());
        String bootstrap = properties.getBootstrapServers().isBlank()
                ? environment.getProperty("spring.kafka.bootstrap-servers", "localhost:9092")
                : properties.getBootstrapServers();
        producer.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return new KafkaTransport(producer, router, properties.getAckTimeout());
    }

    @Bean
    @ConditionalOnMissingBean
    OutboxStatus onceOutboxStatus(DataSource dataSource) {
        return new OutboxStatus(dataSource);
    }

    @Bean
    @ConditionalOnMissingBean
    RelayListener onceRelayListener(ObjectProvider<MeterRegistry> registries, OutboxStatus status,
                                    OnceRelayProperties properties) {
        MeterRegistry registry = registries.getIfAvailable();
        if (registry == null) {
            return RelayListener.NONE;
        }
        return new RelayMetrics(registry, status,
                properties.getMode() == OnceRelayProperties.Mode.CDC ? properties.getSlotName() : null);
    }

    @Bean(destroyMethod = "")
    @ConditionalOnMissingBean
    OutboxRelay onceOutboxRelay(DataSource dataSource, EventTransport transport, RelayListener listener,
                                OnceRelayProperties properties, Environment environment) {
        if (properties.getMode() == OnceRelayProperties.Mode.POLLING) {
            return new PollingRelay("polling", dataSource, transport, properties.toOptions(), listener);
        }
        String schema = properties.getSchema().isBlank()
                ? new org.springframework.jdbc.core.JdbcTemplate(dataSource).queryForObject("SELECT current_schema()", String.class)
                : properties.getSchema();
        CdcSettings settings = new CdcSettings(environment.getRequiredProperty("spring.datasource.url"),
                environment.getProperty("spring.datasource.username", ""),
                environment.getProperty("spring.datasource.password", ""), schema,
                properties.getSlotName(), properties.getPublicationName(), properties.getHeartbeat(),
                properties.getLeaderPoll());
        return new CdcRelay("cdc", dataSource, settings, transport, properties.toOptions(), listener);
    }

    @Bean
    @ConditionalOnMissingBean(name = "onceOutboxRelayLifecycle")
    SmartLifecycle onceOutboxRelayLifecycle(OutboxRelay relay, EventTransport transport) {
        return new SmartLifecycle() {
            private volatile boolean running;

            @Override
            public void start() {
                relay.start();
                running = true;
            }

            @Override
            public void stop() {
                relay.close();
                transport.close();
                running = false;
            }

            @Override
            public boolean isRunning() {
                return running;
            }
        };
    }

    /** {@code /actuator/health} shows the relay: down when it failed, up with its state otherwise. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    static class RelayHealth {

        @Bean
        @ConditionalOnMissingBean(name = "onceOutboxRelayHealthIndicator")
        HealthIndicator onceOutboxRelayHealthIndicator(OutboxRelay relay, OutboxStatus status) {
            return () -> {
                OutboxRelay.RelayState state = relay.state();
                Health.Builder health = state.status() == OutboxRelay.RelayState.Status.FAILED ? Health.down() : Health.up();
                return health.withDetail("state", state.status().name()).withDetail("detail", String.valueOf(state.detail()))
                        .withDetail("pending", status.pending()).withDetail("parked", status.parkedCount()).build();
            };
        }
    }
}
