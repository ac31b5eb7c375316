package dev.once.guard.web;

import dev.once.guard.IdempotencyPolicy;
import dev.once.idempotency.ClaimPolicy;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.http.ResponseEntity;

/** Builds each {@link Idempotent} method's policy once: the annotation's values over the configured defaults. */
final class RoutePolicies {

    private final IdempotencyPolicy defaults;
    private final Map<Method, IdempotencyPolicy> cache = new ConcurrentHashMap<>();

    RoutePolicies(IdempotencyPolicy defaults) {
        this.defaults = defaults;
    }

    /**
     * What can be checked of a route without the configured defaults, when the application starts: it returns
     * {@code ResponseEntity}, each duration it names parses, and its own lease is shorter than its own TTL. The rest
     * is checked when its policy is first built.
     */
    static void check(Method method, Idempotent route, boolean reactive) {
        String where = method.getDeclaringClass().getSimpleName() + "." + method.getName();
        if (reactive) {
            checkReactive(method, where);
        } else if (!ResponseEntity.class.isAssignableFrom(method.getReturnType())) {
            throw new IllegalArgumentException("@Idempotent method " + where
                    + " must return ResponseEntity<?> so its response can be stored and replayed");
        }
        Duration lease = route.lease().isBlank() ? null : duration(route.lease(), null, where, "lease");
        Duration ttl = route.ttl().isBlank() ? null : duration(route.ttl(), null, where, "ttl");
        if (!route.waitMax().isBlank()) {
            duration(route.waitMax(), null, where, "waitMax");
        }
        if (lease != null && ttl != null) {
            try {
                ClaimPolicy.custom().lease(lease).ttl(ttl).build();
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("@Idempotent on " + where + ": " + e.getMessage(), e);
            }
        }
    }

    /**
     * On WebFlux the method returns {@code Mono<ResponseEntity<?>>} (the work, subscribed once the key is claimed)
     * and reads its body as a value: the guard fingerprints the bytes before the work runs, which a body read as a
     * stream inside the work would come after.
     */
    private static void checkReactive(Method method, String where) {
        org.springframework.core.ResolvableType returned = org.springframework.core.ResolvableType.forMethodReturnType(method);
        if (!reactor.core.publisher.Mono.class.equals(method.getReturnType())
                || !ResponseEntity.class.isAssignableFrom(returned.getGeneric(0).toClass())) {
            throw new IllegalArgumentException("@Idempotent method " + where + " must return Mono<ResponseEntity<?>> on "
                    + "WebFlux, so its work runs once the key is claimed and its response can be stored and replayed");
        }
        for (java.lang.reflect.Parameter parameter : method.getParameters()) {
            if (parameter.isAnnotationPresent(org.springframework.web.bind.annotation.RequestBody.class)
                    && org.reactivestreams.Publisher.class.isAssignableFrom(parameter.getType())) {
                throw new IllegalArgumentException("@Idempotent method " + where + " reads its @RequestBody as a "
                        + parameter.getType().getSimpleName() + "; declare it as a value (@RequestBody Account body), "
                        + "which WebFlux reads before the method runs, so the guard can fingerprint it first");
            }
        }
    }

    IdempotencyPolicy policyFor(Method method, Idempotent route) {
        return cache.computeIfAbsent(method, m -> build(m, route));
    }

    private IdempotencyPolicy build(Method method, Idempotent route) {
        String where = method.getDeclaringClass().getSimpleName() + "." + method.getName();
        IdempotencyPolicy.Builder policy = IdempotencyPolicy.custom()
                .keyRequired(route.keyRequired())
                .inProgress(route.inProgress(), duration(route.waitMax(), defaults.waitMax(), where, "waitMax"))
                .retryFailed(route.retryFailed())
                .durableClaim(route.durableClaim())
                .lease(duration(route.lease(), defaults.claimPolicy().lease(), where, "lease"))
                .ttl(duration(route.ttl(), defaults.claimPolicy().ttl(), where, "ttl"))
                .transientStatuses(route.transientStatuses().length == 0 ? defaults.transientStatuses()
                        : Arrays.stream(route.transientStatuses()).boxed().collect(Collectors.toSet()));
        try {
            return policy.build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("@Idempotent on " + where + ": " + e.getMessage(), e);
        }
    }

    private static Duration duration(String text, Duration fallback, String where, String attribute) {
        if (text.isBlank()) {
            return fallback;
        }
        try {
            return DurationStyle.detectAndParse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("@Idempotent(" + attribute + " = \"" + text + "\") on " + where
                    + " is not a duration such as \"30s\" or \"PT30S\"", e);
        }
    }
}
