package dev.once.guard.web;

import dev.once.OnceConfigurationException;
import dev.once.guard.GuardResult;
import dev.once.guard.IdempotencyPolicy;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.core.MethodClassKey;
import org.springframework.http.ResponseEntity;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.util.pattern.PathPattern;
import reactor.core.publisher.Mono;

/**
 * Runs each call of an {@link Idempotent} WebFlux controller method (which returns {@code Mono<ResponseEntity<?>>})
 * through the {@link dev.once.guard.ReactiveMutationGuard}, with the HTTP contract of Spring MVC's
 * {@link IdempotentMethodInterceptor}. The method's {@code Mono} is the work: it is subscribed only when the key was
 * claimed; a replay, a conflict or a key in progress answers without it.
 */
final class ReactiveIdempotentInterceptor implements MethodInterceptor {

    private final ReactiveGuarding guarding;
    private final RoutePolicies policies;
    private final Map<MethodClassKey, Optional<Idempotent>> annotations = new ConcurrentHashMap<>();

    ReactiveIdempotentInterceptor(ReactiveGuarding guarding, RoutePolicies policies) {
        this.guarding = guarding;
        this.policies = policies;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Method method = invocation.getMethod();
        Object target = invocation.getThis();
        Idempotent route = annotations.computeIfAbsent(new MethodClassKey(method, target == null ? null : target.getClass()),
                k -> Optional.ofNullable(IdempotentMethodInterceptor.annotation(invocation))).orElse(null);
        if (route == null) {
            return invocation.proceed();
        }
        return Mono.deferContextual(context -> {
            ServerWebExchange exchange = ExchangeCapture.exchange(context).orElse(null);
            if (exchange == null) {
                return Mono.error(new OnceConfigurationException("@Idempotent "
                        + method.getDeclaringClass().getSimpleName() + "." + method.getName()
                        + " was subscribed outside a WebFlux request, where no Idempotency-Key can be read; it did not run",
                        "Return its Mono to WebFlux from a request of its route, or guard the work with "
                                + "ReactiveMutationGuard.run(...) and a key of your own"));
            }
            if (ExchangeCapture.SAFE_METHODS.contains(exchange.getRequest().getMethod().name())) {
                return work(invocation);
            }
            IdempotencyPolicy policy = policies.policyFor(method, route);
            PathPattern pattern = exchange.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
            String template = pattern != null ? pattern.getPatternString()
                    : exchange.getRequest().getPath().pathWithinApplication().value();
            return guarding.guard(exchange, policy, template,
                            ExchangeCapture.body(exchange, guarding.maxRequestBodyBytes()),
                            mutation -> work(invocation).flatMap(entity -> guarding.conversion().toStored(entity)))
                    .flatMap(answer -> answer == ReactiveGuarding.UNGUARDED ? work(invocation)
                            : Mono.just(guarding.conversion().toEntity((GuardResult) answer)));
        });
    }

    /** The method's own {@code Mono}, called now. */
    private static Mono<ResponseEntity<?>> work(MethodInvocation invocation) {
        try {
            Object result = invocation.proceed();
            if (!(result instanceof Mono<?> mono)) {
                return Mono.error(new IllegalStateException("@Idempotent " + invocation.getMethod().getName()
                        + " must return Mono<ResponseEntity<?>>, and returned " + result));
            }
            return mono.map(entity -> (ResponseEntity<?>) entity);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            return Mono.error(t);
        }
    }
}
