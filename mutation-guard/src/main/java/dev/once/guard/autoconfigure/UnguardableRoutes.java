package dev.once.guard.autoconfigure;

import dev.once.OnceConfigurationException;
import dev.once.guard.web.Idempotent;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Refuses {@link Idempotent} methods where no guard can apply them: in an application without a web server, nothing
 * reads an {@code Idempotency-Key} and the methods would run unguarded without a word. Startup stops at the first such bean, naming the method and the fix.
 */
final class UnguardableRoutes implements BeanPostProcessor {

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> type = AopUtils.getTargetClass(bean);
        if (type.getName().startsWith("org.springframework.")) {
            return bean;
        }
        ReflectionUtils.doWithMethods(type, method -> {
            throw new OnceConfigurationException("@Idempotent on " + type.getSimpleName() + "." + method.getName()
                    + " cannot be guarded: this application has no web server, and Once guards @Idempotent "
                    + "methods only in Spring MVC and WebFlux requests, so it would run unguarded", "Serve the route "
                    + "with Spring MVC or WebFlux (spring-boot-starter-webmvc or -webflux), or guard the work with IdempotencyMutationGuard.run(...) and a key "
                    + "of your own, and remove @Idempotent");
        }, method -> AnnotatedElementUtils.hasAnnotation(method, Idempotent.class));
        return bean;
    }
}
