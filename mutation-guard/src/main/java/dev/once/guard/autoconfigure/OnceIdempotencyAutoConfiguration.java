package dev.once.guard.autoconfigure;

import dev.once.autoconfigure.OnceStoreAutoConfiguration;
import dev.once.guard.FailureMapper;
import dev.once.guard.GuardListener;
import dev.once.guard.IdempotencyMutationGuard;
import dev.once.guard.web.IdempotencyPrincipalResolver;
import dev.once.guard.web.IdempotentRoutes;
import dev.once.guard.web.RequestBodyCapture;
import dev.once.guard.web.SecurityPrincipalResolver;
import dev.once.guard.web.ServletPrincipalResolver;
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

    /** {@code @Idempotent} where no guard applies it (WebFlux, or no web server) stops startup. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
    static class Reactive {

        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static UnguardableRoutes onceUnguardableRoutes() {
            return new UnguardableRoutes();
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
            return new SecurityPrincipalResolver(properties.getTenantAuthorityPrefix(), properties.getDefaultTenant());
        }

        @Bean
        @ConditionalOnMissingBean(IdempotencyPrincipalResolver.class)
        IdempotencyPrincipalResolver onceServletPrincipalResolver(OnceIdempotencyProperties properties) {
            return new ServletPrincipalResolver(properties.getDefaultTenant());
        }
    }
}
