package dev.once.guard.web;

import dev.once.guard.IdempotencyPolicy;
import dev.once.guard.ReactiveMutationGuard;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.web.reactive.result.method.HandlerMethodArgumentResolver;
import org.springframework.web.server.WebFilter;

/**
 * The WebFlux integration in one place: an advisor that applies the {@link ReactiveMutationGuard} to
 * {@link Idempotent} methods and nothing else, the {@link dev.once.guard.MutationContext} argument resolver, the
 * {@link IdempotentHandlerFilter} for functional routes, and the web filter that keeps the exchange and the body's
 * bytes for them ({@link #exchangeFilter()}). Collaborators are resolved on the first guarded call.
 */
public final class ReactiveIdempotentRoutes extends AbstractPointcutAdvisor {

    private final transient Supplier<Components> components;
    private transient volatile ReactiveGuarding guarding;
    private transient volatile ReactiveIdempotentInterceptor interceptor;

    /**
     * What the guarded routes need, resolved lazily.
     *
     * @param writers the application's codecs, which render the responses to store
     * @param maxRequestBodyBytes the largest body fingerprinted (over it: 413)
     */
    public record Components(ReactiveMutationGuard guard, IdempotencyPolicy defaults,
                             ReactivePrincipalResolver principals, List<HttpMessageWriter<?>> writers,
                             Set<String> replayedHeaders, int maxRequestBodyBytes) {
    }

    public ReactiveIdempotentRoutes(Supplier<Components> components) {
        this.components = components;
    }

    /**
     * The {@link Idempotent} methods. A method whose annotation cannot work on WebFlux (it does not return
     * {@code Mono<ResponseEntity<?>>}, reads its body as a stream, or names a bad duration) stops the application
     * from starting.
     */
    @Override
    public Pointcut getPointcut() {
        return IdempotentRoutes.pointcut(true);
    }

    @Override
    public Advice getAdvice() {
        return (MethodInterceptor) invocation -> interceptor().invoke(invocation);
    }

    /** Keeps the exchange and the body of keyed requests for the guard; register it as a {@code WebFilter} bean. */
    public WebFilter exchangeFilter() {
        return new ExchangeCapture(() -> guarding().maxRequestBodyBytes());
    }

    /**
     * Answers WebFlux's own refusals on {@link Idempotent} routes (before the guard runs) as problem+json with a
     * {@code code}; register it as a {@code WebExceptionHandler} bean.
     */
    public org.springframework.web.server.WebExceptionHandler errorHandler() {
        return new ReactiveGuardedRouteErrors();
    }

    public HandlerMethodArgumentResolver mutationContextResolver() {
        return new ExchangeMutations();
    }

    /** The filter for functional routes, with the configured default policy. */
    public IdempotentHandlerFilter handlerFilter() {
        return new IdempotentHandlerFilter(this::guarding, () -> components.get().defaults());
    }

    private ReactiveGuarding guarding() {
        ReactiveGuarding current = guarding;
        if (current == null) {
            synchronized (this) {
                current = guarding;
                if (current == null) {
                    Components c = components.get();
                    current = new ReactiveGuarding(c.guard(), c.principals(),
                            new ReactiveResponseConversion(c.writers(), c.replayedHeaders()), c.maxRequestBodyBytes());
                    guarding = current;
                }
            }
        }
        return current;
    }

    private ReactiveIdempotentInterceptor interceptor() {
        ReactiveIdempotentInterceptor current = interceptor;
        if (current == null) {
            synchronized (this) {
                current = interceptor;
                if (current == null) {
                    current = new ReactiveIdempotentInterceptor(guarding(), new RoutePolicies(components.get().defaults()));
                    interceptor = current;
                }
            }
        }
        return current;
    }
}
