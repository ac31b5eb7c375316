package dev.once.guard.autoconfigure;

import dev.once.autoconfigure.OnceStoreAutoConfiguration;
import dev.once.guard.FailureMapper;
import dev.once.guard.GuardListener;
import dev.once.guard.IdempotencyMutationGuard;
import dev.once.guard.ReactiveMutationGuard;
import dev.once.guard.web.IdempotencyPrincipalResolver;
import dev.once.guard.web.IdempotentHandlerFilter;
import dev.once.guard.web.ReactiveIdempotentRoutes;
import dev.once.guard.web.ReactivePrincipalResolver;
import dev.once.guard.web.IdempotentRoutes;
import dev.once.guard.web.RequestBodyCapture;
import dev.once.guard.web.WebFailureMapper;
import dev.once.idempotency.IdempotencyStore;
import dev.once.outbox.OutboxTracing;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.util.List;
import java.util.Set;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.web.method.support.HandlerMethodArgumentResolver;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.web.reactive.result.method.annotation.ArgumentResolverConfigurer;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import org.springframework.web.server.WebFilter;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import org.springframework.web.servlet.mvc.method.annotation.ExceptionHandlerExceptionResolver;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;

/**
 * Spring Boot autoconfiguration of Once's mutation guard, plus the Spring MVC integration for {@code @Idempotent}
 * routes in a servlet web application. The store, the outbox writer and the schema it uses come from
 * {@link OnceStoreAutoConfiguration}. Every bean backs off when the application defines its own;
 * {@code once.idempotency.enabled=false} turns all of it off.
 */
@AutoConfiguration(after = OnceStoreAutoConfiguration.class, afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
        "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
        "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration"})
@ConditionalOnBean(IdempotencyStore.class)
@ConditionalOnBooleanProperty(name = "once.idempotency.enabled", matchIfMissing = true)
@EnableConfigurationProperties(OnceIdempotencyProperties.class)
public class OnceIdempotencyAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    FailureMapper onceFailureMapper() {
        return FailureMapper.INTERNAL_ERROR;
    }

    @Bean
    @ConditionalOnMissingBean
    GuardListener onceGuardListener() {
        return GuardListener.NONE;
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(PlatformTransactionManager.class)
    IdempotencyMutationGuard idempotencyMutationGuard(IdempotencyStore store, PlatformTransactionManager transactions,
                                                      FailureMapper failures, GuardListener listener,
                                                      ObjectProvider<ObservationRegistry> observations,
                                                      ObjectProvider<OutboxTracing> tracing,
                                                      ObjectProvider<tools.jackson.databind.json.JsonMapper> json) {
        return new IdempotencyMutationGuard(store, transactions, failures, listener,
                observations.getIfAvailable(() -> ObservationRegistry.NOOP),
                tracing.getIfAvailable(() -> OutboxTracing.NONE), json.getIfUnique()); // the application's mapper
    }

    /** Micrometer counters and timers, when Micrometer is on the classpath. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    static class Metrics {

        @Bean
        @ConditionalOnMissingBean
        GuardListener onceGuardListener(ObjectProvider<MeterRegistry> registries) {
            return new MicrometerGuardListener(registries);
        }
    }

    /** {@code @Idempotent} routes, annotated and functional, in a WebFlux application. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
    @ConditionalOnClass(name = "org.springframework.web.reactive.config.WebFluxConfigurer")
    static class WebFlux {

        @Bean
        @ConditionalOnMissingBean
        FailureMapper onceFailureMapper() {
            return new WebFailureMapper();
        }

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnBean(PlatformTransactionManager.class) // as the guard it wraps (a member class is read first)
        ReactiveMutationGuard reactiveMutationGuard(IdempotencyMutationGuard guard, OnceIdempotencyProperties properties,
                                                    org.springframework.context.ApplicationContext context,
                                                    @org.springframework.beans.factory.annotation.Qualifier("onceGuardJdbcScheduler")
                                                    reactor.core.scheduler.Scheduler scheduler) {
            return properties.getReactive().getTransactions() == ReactiveMutationGuard.Transactions.R2DBC
                    ? R2dbcGuard.create(guard, context, scheduler)
                    : ReactiveMutationGuard.jdbc(guard, scheduler);
        }

        @Bean(destroyMethod = "dispose")
        @ConditionalOnMissingBean(name = "onceGuardJdbcScheduler")
        reactor.core.scheduler.Scheduler onceGuardJdbcScheduler(OnceIdempotencyProperties properties) {
            return ReactiveMutationGuard.jdbcScheduler(properties.getReactive().getJdbcThreads());
        }

        @Bean
        @ConditionalOnMissingBean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static ReactiveIdempotentRoutes reactiveIdempotentRoutes(ObjectProvider<ReactiveMutationGuard> guard,
                                                                 ObjectProvider<OnceIdempotencyProperties> properties,
                                                                 ObjectProvider<ReactivePrincipalResolver> principals,
                                                                 ObjectProvider<ServerCodecConfigurer> codecs) {
            return new ReactiveIdempotentRoutes(() -> {
                OnceIdempotencyProperties p = properties.getObject();
                ReactiveMutationGuard reactive = guard.getIfAvailable();
                if (reactive == null) {
                    throw new dev.once.OnceConfigurationException("@Idempotent WebFlux routes need the "
                            + "IdempotencyMutationGuard, and there is none: it needs a JDBC PlatformTransactionManager "
                            + "over the DataSource of Once's store", "Declare a DataSourceTransactionManager bean over "
                            + "that DataSource (Spring Boot creates none once another transaction manager, such as an "
                            + "R2dbcTransactionManager, exists)");
                }
                return new ReactiveIdempotentRoutes.Components(reactive, p.toPolicy(), principals.getObject(),
                        List.copyOf(codecs.getObject().getWriters()), Set.copyOf(p.getReplayedHeaders()),
                        p.getMaxRequestBodyBytes());
            });
        }

        @Bean
        @ConditionalOnMissingBean(name = "onceExchangeFilter")
        WebFilter onceExchangeFilter(ReactiveIdempotentRoutes routes) {
            return routes.exchangeFilter();
        }

        /** WebFlux's refusals on guarded routes as problem+json, before Spring Boot's error handler. */
        @Bean
        @ConditionalOnMissingBean(name = "onceGuardedRouteErrors")
        org.springframework.web.server.WebExceptionHandler onceGuardedRouteErrors(ReactiveIdempotentRoutes routes) {
            return routes.errorHandler();
        }

        @Bean
        @ConditionalOnMissingBean
        IdempotentHandlerFilter idempotentHandlerFilter(ReactiveIdempotentRoutes routes) {
            return routes.handlerFilter();
        }

        @Bean
        @ConditionalOnMissingBean(name = "onceReactiveMutationContextArgument")
        WebFluxConfigurer onceReactiveMutationContextArgument(ReactiveIdempotentRoutes routes) {
            org.springframework.web.reactive.result.method.HandlerMethodArgumentResolver resolver =
                    routes.mutationContextResolver();
            return new WebFluxConfigurer() {
                @Override
                public void configureArgumentResolvers(ArgumentResolverConfigurer configurer) {
                    configurer.addCustomResolver(resolver);
                }
            };
        }

        @Bean
        @ConditionalOnMissingBean
        ReactivePrincipalResolver onceReactivePrincipalResolver(OnceIdempotencyProperties properties) {
            return ReactivePrincipalResolver.of(properties.getTenantAuthorityPrefix(), properties.getDefaultTenant());
        }
    }

    /** The R2DBC side of {@link WebFlux}, loaded only when R2DBC is chosen. */
    static final class R2dbcGuard {

        private R2dbcGuard() {
        }

        static ReactiveMutationGuard create(IdempotencyMutationGuard guard,
                                            org.springframework.context.ApplicationContext context,
                                            reactor.core.scheduler.Scheduler scheduler) {
            String fix = "Add spring-boot-starter-r2dbc and an R2DBC driver (org.postgresql:r2dbc-postgresql) with "
                    + "spring.r2dbc.url, or set once.idempotency.reactive.transactions=jdbc";
            if (!org.springframework.util.ClassUtils.isPresent("org.springframework.r2dbc.core.DatabaseClient",
                    R2dbcGuard.class.getClassLoader())) {
                throw new dev.once.OnceConfigurationException("once.idempotency.reactive.transactions=r2dbc, but "
                        + "Spring's R2DBC support is not on the classpath", fix);
            }
            io.r2dbc.spi.ConnectionFactory connections = context.getBeanProvider(io.r2dbc.spi.ConnectionFactory.class)
                    .getIfUnique();
            org.springframework.transaction.ReactiveTransactionManager transactions = context.getBeanProvider(
                    org.springframework.transaction.ReactiveTransactionManager.class).getIfUnique();
            if (connections == null || transactions == null) {
                throw new dev.once.OnceConfigurationException("once.idempotency.reactive.transactions=r2dbc, but there "
                        + "is no unique " + (connections == null ? "R2DBC ConnectionFactory" : "ReactiveTransactionManager")
                        + " bean", fix);
            }
            dev.once.idempotency.IdempotencyStoreOptions options = context.getBeanProvider(
                    dev.once.autoconfigure.OnceStoreProperties.class).getIfAvailable(
                    dev.once.autoconfigure.OnceStoreProperties::new).toStoreOptions();
            return ReactiveMutationGuard.r2dbc(guard, scheduler, transactions,
                    dev.once.idempotency.R2dbcCompletion.create(
                            org.springframework.r2dbc.core.DatabaseClient.create(connections), options));
        }
    }

    /** The same in an application without a web server. */
    @Configuration(proxyBeanMethods = false)
    @org.springframework.boot.autoconfigure.condition.ConditionalOnNotWebApplication
    static class NotWeb {

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static UnguardableRoutes onceUnguardableRoutes() {
            return new UnguardableRoutes();
        }
    }

    /** {@code @Idempotent} routes in a servlet web application. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    @ConditionalOnClass(DispatcherServlet.class)
    static class Web {

        @Bean
        @ConditionalOnMissingBean
        FailureMapper onceFailureMapper() {
            return new WebFailureMapper();
        }

        @Bean
        @ConditionalOnMissingBean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static IdempotentRoutes idempotentRoutes(ObjectProvider<IdempotencyMutationGuard> guard,
                                                 ObjectProvider<OnceIdempotencyProperties> properties,
                                                 ObjectProvider<IdempotencyPrincipalResolver> principals,
                                                 ObjectProvider<RequestMappingHandlerAdapter> mvc) {
            return new IdempotentRoutes(() -> {
                OnceIdempotencyProperties p = properties.getObject();
                return new IdempotentRoutes.Components(guard.getObject(), p.toPolicy(), principals.getObject(),
                        List.copyOf(mvc.getObject().getMessageConverters()), Set.copyOf(p.getReplayedHeaders()),
                        p.getMaxRequestBodyBytes());
            });
        }

        @Bean
        @ConditionalOnMissingBean
        RequestBodyCapture onceRequestBodyCapture(OnceIdempotencyProperties properties) {
            return new RequestBodyCapture(properties.getMaxRequestBodyBytes());
        }

        @Bean
        @ConditionalOnMissingBean(name = "onceMutationContextArgument")
        WebMvcConfigurer onceMutationContextArgument(IdempotentRoutes routes) {
            HandlerMethodArgumentResolver resolver = routes.mutationContextResolver();
            return new WebMvcConfigurer() {
                @Override
                public void addArgumentResolvers(List<HandlerMethodArgumentResolver> resolvers) {
                    resolvers.add(resolver);
                }
            };
        }

        /** Spring MVC's refusals on guarded routes as problem+json, after the application's own handlers. */
        @Bean
        @ConditionalOnMissingBean(name = "onceGuardedRouteErrors")
        WebMvcConfigurer onceGuardedRouteErrors(IdempotentRoutes routes) {
            HandlerExceptionResolver resolver = routes.errorResolver();
            return new WebMvcConfigurer() {
                @Override
                public void extendHandlerExceptionResolvers(List<HandlerExceptionResolver> resolvers) {
                    int annotated = 0;
                    while (annotated < resolvers.size()
                            && !(resolvers.get(annotated) instanceof ExceptionHandlerExceptionResolver)) {
                        annotated++;
                    }
                    resolvers.add(annotated < resolvers.size() ? annotated + 1 : 0, resolver);
                }
            };
        }

        @Bean
        @ConditionalOnMissingBean(IdempotencyPrincipalResolver.class)
        @ConditionalOnClass(name = "org.springframework.security.core.context.SecurityContextHolder")
        IdempotencyPrincipalResolver onceSecurityPrincipalResolver(OnceIdempotencyProperties properties) {
            return IdempotencyPrincipalResolver.fromSecurity(properties.getTenantAuthorityPrefix(),
                    properties.getDefaultTenant());
        }

        @Bean
        @ConditionalOnMissingBean(IdempotencyPrincipalResolver.class)
        IdempotencyPrincipalResolver onceServletPrincipalResolver(OnceIdempotencyProperties properties) {
            return IdempotencyPrincipalResolver.fromServletPrincipal(properties.getDefaultTenant());
        }
    }
}
