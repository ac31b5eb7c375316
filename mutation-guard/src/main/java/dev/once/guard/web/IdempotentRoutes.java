package dev.once.guard.web;

import dev.once.guard.IdempotencyMutationGuard;
import dev.once.guard.IdempotencyPolicy;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.aop.support.annotation.AnnotationMethodMatcher;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.web.method.support.HandlerMethodArgumentResolver;
import org.springframework.web.servlet.HandlerExceptionResolver;

/**
 * The Spring MVC integration in one place: an advisor that applies the guard to {@link Idempotent} methods and nothing
 * else (no filter, no global middleware), and the {@link dev.once.guard.MutationContext} argument resolver. Its
 * collaborators are resolved on the first guarded call, so the advisor is cheap to create early, as advisors are.
 */
public final class IdempotentRoutes extends AbstractPointcutAdvisor {

    private final transient Supplier<Components> components;
    private final transient CurrentMutation currentMutation = new CurrentMutation();
    private final transient GuardedRouteErrors errors = new GuardedRouteErrors();
    private transient volatile IdempotentMethodInterceptor interceptor;

    /**
     * What the guarded routes need, resolved lazily.
     *
     * @param maxRequestBodyBytes the largest body fingerprinted when the method itself reads none (over it: 413)
     */
    public record Components(IdempotencyMutationGuard guard, IdempotencyPolicy defaults,
                             IdempotencyPrincipalResolver principals, List<HttpMessageConverter<?>> converters,
                             Set<String> replayedHeaders, int maxRequestBodyBytes) {

        public Components(IdempotencyMutationGuard guard, IdempotencyPolicy defaults,
                          IdempotencyPrincipalResolver principals, List<HttpMessageConverter<?>> converters,
                          Set<String> replayedHeaders) {
            this(guard, defaults, principals, converters, replayedHeaders,
                    dev.once.guard.GuardDefaults.MAX_REQUEST_BODY_BYTES);
        }
    }

    public IdempotentRoutes(Supplier<Components> components) {
        this.components = components;
    }

    /**
     * The {@link Idempotent} methods. Spring asks while it creates the application's beans, so a route whose
     * annotation cannot work ({@link RoutePolicies#check}) stops the application from starting instead of failing its
     * first request.
     */
    @Override
    public Pointcut getPointcut() {
        return pointcut(false);
    }

    /** The {@link Idempotent} methods, each {@link RoutePolicies#check checked} for its stack when first matched. */
    static Pointcut pointcut(boolean reactive) {
        return new StaticMethodMatcherPointcut() {
            private final AnnotationMethodMatcher annotated = new AnnotationMethodMatcher(Idempotent.class);

            @Override
            public boolean matches(Method method, Class<?> targetClass) {
                if (!annotated.matches(method, targetClass)) {
                    return false;
                }
                Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
                Idempotent route = specific.getAnnotation(Idempotent.class);
                RoutePolicies.check(specific, route != null ? route : method.getAnnotation(Idempotent.class), reactive);
                return true;
            }
        };
    }

    @Override
    public Advice getAdvice() {
        return (MethodInterceptor) invocation -> interceptor().invoke(invocation);
    }

    public HandlerMethodArgumentResolver mutationContextResolver() {
        return currentMutation;
    }

    /**
     * Answers Spring MVC's own refusals on {@link Idempotent} routes (before the guard runs) as problem+json with a
     * {@code code}; register it right after the {@code @ExceptionHandler} resolver, so the application's handlers
     * keep precedence.
     */
    public HandlerExceptionResolver errorResolver() {
        return errors;
    }

    private IdempotentMethodInterceptor interceptor() {
        IdempotentMethodInterceptor current = interceptor;
        if (current == null) {
            synchronized (this) {
                current = interceptor;
                if (current == null) {
                    Components c = components.get();
                    current = new IdempotentMethodInterceptor(c.guard(), new RoutePolicies(c.defaults()), c.principals(),
                            new ResponseConversion(c.converters(), c.replayedHeaders()), c.maxRequestBodyBytes());
                    interceptor = current;
                }
            }
        }
        return current;
    }
}
