package dev.once.relay.autoconfigure;

import dev.once.OnceConfigurationException;
import dev.once.outbox.OutboxOperations;
import dev.once.relay.EventTransport;
import dev.once.relay.KafkaTransport;
import dev.once.relay.OutboxRelay;
import dev.once.relay.PollingRelay;
import dev.once.relay.RelayListener;
import dev.once.relay.TopicRouter;
import dev.once.retention.RetentionRule;
import dev.once.spi.RunningLifecycle;
import dev.once.wire.RecordSigning;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.util.HashMap;
import java.util.Map;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.NoneNestedConditions;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.core.ProducerFactory;

/**
 * Runs the outbox relay in a Spring Boot application ({@code once.outbox.relay.*}). The Kafka producer starts from the
 * application's own {@link ProducerFactory} (Spring Boot's, built from {@code spring.kafka.*}, its SSL bundles and
 * {@code KafkaConnectionDetails}, or one the application defines), then {@code once.outbox.relay.producer.*}, then
 * what the relay requires ({@link KafkaTransport#REQUIRED}). The polling relay runs here; the CDC relay, when
 * {@code once-outbox-relay-cdc} is on the classpath, comes from its own autoconfiguration, which this one yields to.
 * The relay starts after the context is ready and stops before the DataSource closes. Every bean backs off when the
 * application defines its own.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration",
        "dev.once.autoconfigure.OnceStoreAutoConfiguration", "dev.once.wire.autoconfigure.OnceSigningAutoConfiguration"})
@ConditionalOnBean({DataSource.class, OutboxOperations.class})
@ConditionalOnBooleanProperty(name = "once.outbox.relay.enabled", matchIfMissing = true)
@Conditional(OnceRelayAutoConfiguration.NotExternal.class)
@EnableConfigurationProperties(OnceRelayProperties.class)
public class OnceRelayAutoConfiguration {

    /**
     * Unless {@code once.outbox.relay.mode=external}: then a relay outside the application publishes, and rows leave
     * once its slot confirmed them ({@code dev.once.autoconfigure.OnceExternalRelayAutoConfiguration}).
     */
    static final class NotExternal extends NoneNestedConditions {

        NotExternal() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnProperty(name = "once.outbox.relay.mode", havingValue = "external")
        static class External {
        }
    }

    /** What starts the CDC relay's autoconfiguration; absent, the default relay is the polling relay. */
    static final String CDC_RELAY = "dev.once.relay.cdc.CdcRelay";

    @Bean
    @ConditionalOnMissingBean
    TopicRouter onceTopicRouter(OnceRelayProperties properties) {
        return properties.toTopicRouter();
    }

    @Bean
    @ConditionalOnMissingBean
    EventTransport onceEventTransport(OnceRelayProperties properties, TopicRouter router,
                                      ObjectProvider<ProducerFactory<?, ?>> producers, RecordSigning signing,
                                      ObjectProvider<ObservationRegistry> observations) {
        return new KafkaTransport(producerSettings(producers.getObject(), properties.getProducer()), router,
                properties.getAckTimeout(), signing, observations.getIfAvailable(() -> ObservationRegistry.NOOP));
    }

    /**
     * The application's producer settings, then Once's overrides: everything but the serializers, which the relay
     * brings (String keys, byte[] values).
     */
    static Map<String, Object> producerSettings(ProducerFactory<?, ?> application, Map<String, String> overrides) {
        Map<String, Object> settings = new HashMap<>(application.getConfigurationProperties());
        settings.putAll(overrides);
        settings.remove(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG);
        settings.remove(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG);
        settings.remove(ProducerConfig.TRANSACTIONAL_ID_CONFIG); // the relay's producer is idempotent, not transactional
        return settings;
    }

    /**
     * What the service's retention sweep deletes from {@code outbox_event}: published rows past
     * {@code once.outbox.relay.retention} ({@code once.retention.*} says how and how often).
     */
    @Bean
    @ConditionalOnMissingBean(name = "onceOutboxRetentionRule")
    RetentionRule onceOutboxRetentionRule(OnceRelayProperties properties) {
        return RetentionRule.publishedOutboxEvents(properties.getRetention());
    }

    /** Without Micrometer on the classpath (it is optional), or without a registry, the relay reports to no one. */
    @Bean
    @ConditionalOnMissingBean
    RelayListener onceRelayListener() {
        return RelayListener.NONE;
    }

    /**
     * The relay's metrics ({@link RelayMetrics}) when Micrometer is on the classpath and a registry exists. A member
     * class, so that no method signature names Micrometer's types when it is absent, and so that its bean is
     * registered before the fallback above looks for one.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    static class RelayMetering {

        @Bean
        @ConditionalOnMissingBean
        RelayListener onceRelayMetrics(ObjectProvider<MeterRegistry> registries, OutboxOperations status) {
            MeterRegistry registry = registries.getIfAvailable();
            return registry == null ? RelayListener.NONE : new RelayMetrics(registry, status);
        }
    }

    /**
     * The polling relay: chosen with {@code mode=polling}, or by default when the CDC relay's module is absent. A
     * CDC relay asked for without its module is a configuration error, said at startup.
     */
    @Bean(destroyMethod = "")
    @ConditionalOnMissingBean
    OutboxRelay onceOutboxRelay(DataSource dataSource, EventTransport transport, RelayListener listener,
                                OnceRelayProperties properties) {
        if (properties.getMode() == OnceRelayProperties.Mode.CDC) {
            throw new OnceConfigurationException("once.outbox.relay.mode=cdc asks for the CDC relay, whose module is not on "
                    + "the classpath", "Add dev.once:once-outbox-relay-cdc, or set once.outbox.relay.mode=polling");
        }
        return new PollingRelay("polling", dataSource, transport, properties.toOptions(), listener);
    }

    @Bean
    @ConditionalOnMissingBean(name = "onceOutboxRelayLifecycle")
    SmartLifecycle onceOutboxRelayLifecycle(OutboxRelay relay, EventTransport transport) {
        return RunningLifecycle.of(relay::start, () -> {
            relay.close();
            transport.close();
        });
    }

    /** {@code /actuator/health} shows the relay as it is ({@link RelayHealthIndicator}). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    static class RelayHealth {

        @Bean
        @ConditionalOnMissingBean(name = "onceOutboxRelayHealthIndicator")
        HealthIndicator onceOutboxRelayHealthIndicator(OutboxRelay relay, OutboxOperations status,
                                                       OnceRelayProperties properties, RecordSigning signing) {
            return new RelayHealthIndicator(relay, status, properties.getMaxPendingAge(), signing);
        }
    }
}
