package dev.once.autoconfigure;

import dev.once.OnceDataSource;
import dev.once.idempotency.HandlerClaims;
import dev.once.idempotency.IdempotencyDefaults;
import dev.once.idempotency.IdempotencyOperations;
import dev.once.idempotency.IdempotencyStore;
import dev.once.outbox.DomainEvents;
import dev.once.outbox.OutboxEventMapper;
import dev.once.outbox.OutboxOperations;
import dev.once.outbox.OutboxTracing;
import dev.once.outbox.OutboxWriter;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.propagation.Propagator;
import javax.sql.DataSource;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.transaction.jta.JtaTransactionManager;

/**
 * Spring Boot autoconfiguration of Once's database side, for every role that writes or reads Once's tables: the
 * schema (one migration decision, {@code once.idempotency.migrate}), the {@link OnceDataSource} wrapping and
 * {@link HandlerClaims}; with {@code once.idempotency.enabled} (the default) the one {@link IdempotencyStore} and
 * {@link IdempotencyOperations}; with {@code once.outbox.enabled} (the default) the {@link OutboxWriter}, domain
 * events and {@link OutboxOperations}. A service that only appends outbox events needs this module alone, and may
 * switch the idempotency side off; with both off, nothing of this is created and the schema is left alone. Every bean
 * backs off when the application defines its own.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
        "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
        "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration",
        "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration",
        "org.springframework.boot.micrometer.tracing.opentelemetry.autoconfigure.OpenTelemetryTracingAutoConfiguration",
        "org.springframework.boot.micrometer.tracing.brave.autoconfigure.BraveAutoConfiguration",
        "org.springframework.boot.micrometer.tracing.autoconfigure.NoopTracerAutoConfiguration"})
@ConditionalOnBean(DataSource.class)
@Conditional(OnceStoreAutoConfiguration.AnyRoleEnabled.class)
@EnableConfigurationProperties(OnceStoreProperties.class)
public class OnceStoreAutoConfiguration {

    /** The idempotency side ({@code once.idempotency.enabled}) or the outbox ({@code once.outbox.enabled}) is on. */
    static final class AnyRoleEnabled extends AnyNestedCondition {

        AnyRoleEnabled() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnBooleanProperty(name = "once.idempotency.enabled", matchIfMissing = true)
        static final class Idempotency {
        }

        @ConditionalOnBooleanProperty(name = "once.outbox.enabled", matchIfMissing = true)
        static final class Outbox {
        }
    }

    /** Stops startup when a setting of an earlier version is set under its old name ({@link RenamedProperties}). */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static org.springframework.beans.factory.config.BeanFactoryPostProcessor onceRenamedProperties(Environment environment) {
        return beanFactory -> RenamedProperties.check(environment);
    }

    /**
     * Wraps each {@link DataSource} bean in an {@link OnceDataSource}, so that outbox rows and the guard's completion
     * travel with the transaction's {@code COMMIT} ({@code once.idempotency.pipelined-commit}, on by default).
     * Everything else passes through; pools stay reachable with {@code unwrap}. Not under JTA: a global transaction
     * commits through its XA resources, never through {@code Connection.commit}, so nothing is wrapped when the
     * application defines a {@link JtaTransactionManager}.
     */
    @Bean
    @ConditionalOnMissingBean(name = "onceDataSourcePipelining")
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static BeanPostProcessor onceDataSourcePipelining(Environment environment, ListableBeanFactory beans) {
        boolean enabled = Binder.get(environment).bind("once.idempotency.pipelined-commit", Boolean.class)
                .orElse(IdempotencyDefaults.PIPELINED_COMMIT);
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String beanName) {
                return enabled && bean instanceof DataSource dataSource && !(bean instanceof OnceDataSource)
                        && beans.getBeanNamesForType(JtaTransactionManager.class, true, false).length == 0
                        ? new OnceDataSource(dataSource) : bean;
            }
        };
    }

    @Bean
    @ConditionalOnMissingBean
    OnceSchema onceSchema(DataSource dataSource, OnceStoreProperties properties) {
        return new OnceSchema(dataSource, properties.isMigrate());
    }

    @Bean
    @ConditionalOnMissingBean
    HandlerClaims handlerClaims(DataSource dataSource, OnceSchema schema) {
        return HandlerClaims.create(dataSource);
    }

    /**
     * With Micrometer Tracing (a {@code Tracer} and a {@code Propagator}, as Boot defines them for the OpenTelemetry
     * or Brave bridge): each appended event carries the trace context current at its append, for the guard and for
     * {@link OutboxWriter} alike.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.tracing.Tracer")
    static class Tracing {

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnBean({Tracer.class, Propagator.class})
        OutboxTracing onceOutboxTracing(Tracer tracer, Propagator propagator) {
            return new MicrometerOutboxTracing(tracer, propagator);
        }
    }

    /** The idempotency side: {@code once.idempotency.enabled=false} leaves it out (the guard backs off with it). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "once.idempotency.enabled", matchIfMissing = true)
    static class Idempotency {

        @Bean
        @ConditionalOnMissingBean
        IdempotencyStore idempotencyStore(DataSource dataSource, OnceStoreProperties properties, OnceSchema schema) {
            return IdempotencyStore.create(dataSource, properties.toStoreOptions());
        }

        @Bean
        @ConditionalOnMissingBean
        IdempotencyOperations idempotencyOperations(DataSource dataSource, OnceSchema schema) {
            return IdempotencyOperations.create(dataSource);
        }
    }

    /**
     * The outbox's application side: {@code once.outbox.enabled=false} leaves it out, for a service that guards
     * requests and appends no events of its own (events a guarded handler appends still commit with its record).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "once.outbox.enabled", matchIfMissing = true)
    static class Outbox {

        @Bean
        @ConditionalOnMissingBean
        OutboxWriter outboxWriter(DataSource dataSource, OnceSchema schema, ObjectProvider<OutboxTracing> tracing,
                                  ObjectProvider<tools.jackson.databind.json.JsonMapper> json) {
            // the application's JsonMapper (Spring Boot's configured one) for object payloads, when it has one
            OutboxTracing traced = tracing.getIfAvailable(() -> OutboxTracing.NONE);
            tools.jackson.databind.json.JsonMapper mapper = json.getIfUnique();
            return mapper == null ? OutboxWriter.create(dataSource, traced)
                    : OutboxWriter.create(dataSource, traced, mapper);
        }

        /**
         * Application events of mapped types ({@code @OutboxMapping}, {@code OutboxEventMapper} beans) into the
         * outbox, in the publishing transaction; {@code once.outbox.domain-events.enabled=false} leaves every event
         * alone.
         */
        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnBooleanProperty(name = "once.outbox.domain-events.enabled", matchIfMissing = true)
        DomainEvents onceDomainEvents(OutboxWriter writer, ObjectProvider<OutboxEventMapper> mappers) {
            return new DomainEvents(writer, mappers.orderedStream().toList());
        }

        @Bean
        @ConditionalOnMissingBean
        OutboxOperations outboxOperations(DataSource dataSource, OnceSchema schema) {
            return OutboxOperations.create(dataSource);
        }
    }
}
