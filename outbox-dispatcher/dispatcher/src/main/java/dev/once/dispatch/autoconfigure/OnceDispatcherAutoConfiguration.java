package dev.once.dispatch.autoconfigure;

import dev.once.OnceConfigurationException;
import dev.once.autoconfigure.OnceSchema;
import dev.once.autoconfigure.OnceStoreAutoConfiguration;
import dev.once.dispatch.DispatchListener;
import dev.once.dispatch.EventDispatcher;
import dev.once.dispatch.HandlerRegistration;
import dev.once.dispatch.KafkaEventDispatcher;
import dev.once.dispatch.Parking;
import dev.once.idempotency.ClaimPartitions;
import dev.once.idempotency.HandlerClaimStore;
import dev.once.retention.RetentionRule;
import dev.once.spi.RunningLifecycle;
import dev.once.wire.RecordSigning;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerConfig;
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
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.KafkaAdmin;
import org.springframework.kafka.core.ProducerFactory;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * Runs the exactly-once Kafka handlers ({@code once.dispatcher.*}). Handlers are declared as plain beans of type
 * {@link HandlerRegistration}, e.g. {@code @Bean HandlerRegistration accountProjection() { return
 * HandlerRegistration.transactional("AccountCreated", 1, "account-projection", event -> ...); }}. The consumers start
 * when {@code once.dispatcher.topics} is set. Every bean backs off when the application defines its own.
 */
@AutoConfiguration(after = OnceStoreAutoConfiguration.class, afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
        "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
        "org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration",
        "dev.once.wire.autoconfigure.OnceSigningAutoConfiguration"})
@ConditionalOnBean({DataSource.class, OnceSchema.class, PlatformTransactionManager.class})
@ConditionalOnProperty(prefix = "once.dispatcher", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(OnceDispatcherProperties.class)
public class OnceDispatcherAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    DispatchListener onceDispatchListener(ObjectProvider<MeterRegistry> registries) {
        MeterRegistry registry = registries.getIfAvailable();
        return registry == null ? DispatchListener.NONE : new DispatchMetrics(registry);
    }

    /**
     * The day partitions of the handlers' claims, kept by this instance unless
     * {@code once.dispatcher.claim-partitions.enabled=false} (another role keeps them then); a day a claim needs is
     * created on demand either way.
     */
    @Bean
    @ConditionalOnMissingBean
    ClaimPartitions onceClaimPartitions(DataSource dataSource, OnceSchema schema, OnceDispatcherProperties properties,
                                        ObjectProvider<MeterRegistry> registries) {
        MeterRegistry registry = registries.getIfAvailable();
        return ClaimPartitions.create(dataSource, properties.toPartitionOptions(),
                registry == null ? ClaimPartitions.Listener.NONE : new PartitionMetrics(registry));
    }

    @Bean
    @ConditionalOnMissingBean(name = "onceClaimPartitionsLifecycle")
    @ConditionalOnProperty(prefix = "once.dispatcher.claim-partitions", name = "enabled", matchIfMissing = true)
    SmartLifecycle onceClaimPartitionsLifecycle(ClaimPartitions partitions) {
        return RunningLifecycle.of(partitions::start, partitions::close);
    }

    @Bean
    @ConditionalOnMissingBean
    HandlerClaimStore onceHandlerClaimStore(DataSource dataSource, ClaimPartitions partitions) {
        return HandlerClaimStore.create(dataSource, partitions);
    }

    /** Undated claims are kept by row: the retention sweep deletes them once their own {@code kept_until} passed. */
    @Bean
    @ConditionalOnMissingBean(name = "onceUndatedClaimsRetentionRule")
    RetentionRule onceUndatedClaimsRetentionRule() {
        return RetentionRule.undatedHandlerClaims();
    }

    @Bean
    @ConditionalOnMissingBean
    EventDispatcher onceEventDispatcher(HandlerClaimStore store, PlatformTransactionManager transactions,
                                        ObjectProvider<HandlerRegistration> handlers, DispatchListener listener,
                                        OnceDispatcherProperties properties, RecordSigning signing,
                                        ObjectProvider<ObservationRegistry> observations) {
        List<HandlerRegistration> registrations = handlers.orderedStream().toList();
        checkDeclaredTopics(registrations, properties.getTopics());
        return new EventDispatcher(store, transactions, registrations, properties.toClaimPolicy(), signing, listener,
                observations.getIfAvailable(() -> ObservationRegistry.NOOP), properties.getUnhandled().toPolicy());
    }

    /**
     * A handler that declares its topic ({@link HandlerRegistration#onTopic}) runs only if the dispatcher consumes
     * that topic: one whose topic is not among {@code once.dispatcher.topics} would never run, and nothing would say
     * so. (A registration that declares no topic cannot be checked: the event type does not name its topic.)
     */
    static void checkDeclaredTopics(List<HandlerRegistration> registrations, List<String> topics) {
        List<String> unconsumed = registrations.stream()
                .filter(r -> r.topic() != null && !topics.contains(r.topic()))
                .map(r -> r.handlerKey() + " (" + r.eventType() + " v" + r.eventVersion() + ", on " + r.topic() + ")")
                .toList();
        if (!unconsumed.isEmpty()) {
            throw new OnceConfigurationException("Handlers are registered for topics the dispatcher does not consume: "
                    + String.join(", ", unconsumed) + "; once.dispatcher.topics is "
                    + (topics.isEmpty() ? "empty, so no consumer runs" : topics),
                    "Add their topics to once.dispatcher.topics, or correct the topic the registration declares");
        }
    }

    /**
     * The consumers, from the application's own {@link ConsumerFactory} and {@link ProducerFactory} (Spring Boot's,
     * built from {@code spring.kafka.*}, its SSL bundles and {@code KafkaConnectionDetails}, or the application's),
     * then {@code once.dispatcher.consumer.*} and {@code .producer.*}, then what the dispatcher requires.
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnProperty(prefix = "once.dispatcher", name = "topics")
    KafkaEventDispatcher onceKafkaEventDispatcher(EventDispatcher dispatcher, OnceDispatcherProperties properties,
                                                  ObjectProvider<MeterRegistry> registries,
                                                  ObjectProvider<ConsumerFactory<?, ?>> consumers,
                                                  ObjectProvider<ProducerFactory<?, ?>> producers,
                                                  ObjectProvider<DataSource> dataSources, Environment environment) {
        Map<String, Object> consumer = new HashMap<>(consumers.getObject().getConfigurationProperties());
        consumer.putAll(properties.getConsumer());
        Map<String, Object> producer = new HashMap<>(producers.getObject().getConfigurationProperties());
        producer.putAll(properties.getProducer());
        Parking parking = properties.getParking().isEnabled()
                ? Parking.on(dataSources.getObject(), properties.getParking().toPolicy()) : Parking.off();
        return new KafkaEventDispatcher(consumer, producer, groupId(properties, consumer, environment), dispatcher,
                properties.getConcurrency(), properties.toRetryPolicy(), parking, registries.getIfAvailable(),
                properties.getTopics().toArray(String[]::new));
    }

    /**
     * {@code once.dispatcher.group-id}, else Spring Boot's {@code spring.kafka.consumer.group-id}, else
     * {@code <spring.application.name>.once}: never one name for every service, since services that shared a group
     * would split each other's partitions and each handle only some of its own events.
     */
    static String groupId(OnceDispatcherProperties properties, Map<String, Object> consumer, Environment environment) {
        if (!properties.getGroupId().isBlank()) {
            return properties.getGroupId();
        }
        Object boot = consumer.get(ConsumerConfig.GROUP_ID_CONFIG);
        if (boot != null && !boot.toString().isBlank()) {
            return boot.toString();
        }
        String application = environment.getProperty("spring.application.name", "");
        if (application.isBlank()) {
            throw new OnceConfigurationException("The dispatcher needs a consumer group of this service's own, and "
                    + "none is configured", "Set once.dispatcher.group-id, or spring.kafka.consumer.group-id, or "
                    + "spring.application.name (which gives <name>.once)");
        }
        return application + ".once";
    }

    /**
     * Starts the consumers once every singleton exists, so after Spring Boot's {@code KafkaAdmin} has created the
     * application's {@code NewTopic}s: first, unless {@code once.dispatcher.check-topics=false}, it checks that the
     * consumed topics and their dead-letter topics exist ({@link TopicCheck}), then that the handlers' claims outlive
     * the topics' retention ({@link TopicRetention}, {@code once.dispatcher.retention-check}), with an admin client
     * built from {@code KafkaAdmin}'s settings (the consumers' when there is no {@code KafkaAdmin}).
     */
    @Bean
    @ConditionalOnBean(KafkaEventDispatcher.class)
    @ConditionalOnMissingBean(name = "onceKafkaEventDispatcherLifecycle")
    SmartLifecycle onceKafkaEventDispatcherLifecycle(KafkaEventDispatcher consumers, OnceDispatcherProperties properties,
                                                     ObjectProvider<KafkaAdmin> admins,
                                                     ObjectProvider<ConsumerFactory<?, ?>> consumerFactories) {
        return RunningLifecycle.of(() -> {
            KafkaAdmin admin = admins.getIfAvailable();
            Map<String, Object> settings = admin != null ? admin.getConfigurationProperties()
                    : consumerFactories.getObject().getConfigurationProperties();
            TopicCheck check = new TopicCheck(settings);
            if (properties.isCheckTopics() && !properties.getTopics().isEmpty()) {
                check.verify(properties.getTopics());
            }
            TopicRetention.check(check.adminSettings(), properties.getTopics(), properties.getClaimRetention(),
                    properties.getRetentionCheck());
            consumers.start();
        }, consumers::close);
    }

    /**
     * The group's parked events for health's details; what the database cannot answer now is said, not thrown: the
     * store's own health tells whether the database is up.
     */
    static Object parked(KafkaEventDispatcher consumers) {
        try {
            return consumers.parked();
        } catch (RuntimeException e) {
            return "unknown: " + e.getMessage();
        }
    }

    /**
     * {@code /actuator/health} shows the dispatcher: up while its consumers run, and while keys are parked or held
     * (details {@code parked}: a rolling deploy holds a new version's events, which is no reason to take the instance
     * out of service); down once they stopped, or when one
     * of them stopped on its own (Kafka refused its credentials), with the reason.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    @ConditionalOnProperty(prefix = "once.dispatcher", name = "topics") // as the consumers themselves
    static class DispatcherHealth {

        /** {@code /actuator/health} says whether the claims' partitions are kept ({@link PartitionHealthIndicator}). */
        @Bean
        @ConditionalOnMissingBean(name = "onceClaimPartitionsHealthIndicator")
        @ConditionalOnProperty(prefix = "once.dispatcher.claim-partitions", name = "enabled", matchIfMissing = true)
        HealthIndicator onceClaimPartitionsHealthIndicator(ClaimPartitions partitions) {
            return new PartitionHealthIndicator(partitions);
        }

        @Bean
        @ConditionalOnMissingBean(name = "onceDispatcherHealthIndicator")
        HealthIndicator onceDispatcherHealthIndicator(KafkaEventDispatcher consumers, OnceDispatcherProperties properties,
                                                      RecordSigning signing) {
            return () -> {
                java.util.Optional<String> problem = consumers.problem()
                        .or(() -> consumers.isRunning() ? java.util.Optional.empty()
                                : java.util.Optional.of("the consumers are not running"));
                Health.Builder health = problem.isEmpty() ? Health.up() : Health.down();
                problem.ifPresent(reason -> health.withDetail("reason", reason));
                return health.withDetail("group", consumers.groupId())
                        .withDetail("topics", properties.getTopics())
                        .withDetail("assigned-consumers", consumers.assignedConsumers())
                        .withDetail("parked", parked(consumers))
                        .withDetail("signing", signing.describe()).build();
            };
        }
    }
}
