package dev.once.guard.web;

import dev.once.guard.GuardResult;
import dev.once.guard.IdempotencyMutationGuard;
import dev.once.guard.IdempotencyPolicy;
import dev.once.guard.MutationRequest;
import dev.once.guard.internal.RateLimitedLog;
import dev.once.idempotency.IdempotencyKey;
import dev.once.idempotency.IdempotencyKeyException;
import dev.once.idempotency.IdempotencyScope;
import dev.once.idempotency.RequestBodyException;
import dev.once.idempotency.RequestFingerprint;
import dev.once.idempotency.Route;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.lang.reflect.Method;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.ErrorResponse;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerMapping;

/**
 * Runs each call of an {@link Idempotent} controller method through the {@link IdempotencyMutationGuard}: validates
 * the key, scopes it to the authenticated principal and the route template, fingerprints method, route, concrete path,
 * query and form parameters and body, and answers with the guard's result. The HTTP contract (IETF Idempotency-Key draft, Stripe):
 * <ul>
 *   <li>no key on a route that requires one: 400 IDEMPOTENCY_KEY_MISSING; a malformed key: 400 IDEMPOTENCY_KEY_INVALID;</li>
 *   <li>same key, different request: 422 IDEMPOTENCY_KEY_CONFLICT;</li>
 *   <li>same key still processing: 409 IDEMPOTENCY_IN_PROGRESS with Retry-After (or wait and replay);</li>
 *   <li>a repeat: the first response's status, body, Content-Type and Location, plus {@code Idempotent-Replayed: true}.</li>
 * </ul>
 */
final class IdempotentMethodInterceptor implements MethodInterceptor {

    private static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS", "TRACE");
    static final String GUARD_ERROR = "IDEMPOTENCY_GUARD_ERROR";
    /** The method runs as it is, without the guard (and outside the guard's error handling). */
    private static final Object UNGUARDED = new Object();
    private static final RateLimitedLog guardErrors = new RateLimitedLog(
            org.slf4j.LoggerFactory.getLogger(IdempotentMethodInterceptor.class));

    private final IdempotencyMutationGuard guard;
    private final RoutePolicies policies;
    private final IdempotencyPrincipalResolver principals;
    private final ResponseConversion conversion;
    private final int maxRequestBodyBytes;
    /** Each method's annotation, merged, or empty: looked up once per method instead of on every call. */
    private final java.util.Map<MethodClassKey, Optional<Idempotent>> annotations =
            new java.util.concurrent.ConcurrentHashMap<>();

    IdempotentMethodInterceptor(IdempotencyMutationGuard guard, RoutePolicies policies,
                                IdempotencyPrincipalResolver principals, ResponseConversion conversion,
                                int maxRequestBodyBytes) {
        this.guard = guard;
        this.policies = policies;
        this.principals = principals;
        this.conversion = conversion;
        this.maxRequestBodyBytes = maxRequestBodyBytes;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Method method = invocation.getMethod();
        Object target = invocation.getThis();
        Idempotent route = annotations.computeIfAbsent(new MethodClassKey(method, target == null ? null : target.getClass()),
                k -> Optional.ofNullable(annotation(invocation))).orElse(null);
        if (route == null) {
            return invocation.proceed();
        }
        RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
        if (!(attributes instanceof ServletRequestAttributes servlet)) {
            // an @Async method, a scheduled job, a listener: no Idempotency-Key to read, and running unguarded would
            // do the very thing @Idempotent promises not to
            throw new dev.once.OnceConfigurationException("@Idempotent " + method.getDeclaringClass().getSimpleName()
                    + "." + method.getName() + " was called outside a Spring MVC request (on thread "
                    + Thread.currentThread().getName() + "), where no Idempotency-Key can be read; it did not run",
                    "Call it from a request of its route, or guard the work with IdempotencyMutationGuard.run(...) "
                            + "and a key of your own");
        }
        HttpServletRequest request = servlet.getRequest();
        if (SAFE_METHODS.contains(request.getMethod())) {
            return invocation.proceed();
        }
        Object answer = admit(method, route, request); // what reading the request throws is not the guard's
        if (answer instanceof Admitted admitted) {
            try {
                answer = guard(invocation, admitted, request);
            } catch (RequestBodyException e) {
                // the client's error, found before anything was claimed: nothing is stored and the key stays free
                return ResponseConversion.problem(HttpStatus.BAD_REQUEST, e.problem().code(), e.getMessage()).build();
            } catch (RuntimeException e) {
                if (e instanceof ErrorResponse error) { // e.g. 413 for a body over the limit
                    return conversion.toEntity(new GuardResult.Completed(
                            WebFailureMapper.problem(error.getStatusCode().value(), error.getBody()), null, null, false));
                }
                guardErrors.warn("Guard of {} failed", e, request.getMethod() + " "
                        + request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE));
                return ResponseConversion.problem(HttpStatus.INTERNAL_SERVER_ERROR, GUARD_ERROR,
                        "The idempotency guard failed; nothing of this request was stored. Retry with the same "
                                + "Idempotency-Key.").build();
            }
        }
        if (answer == UNGUARDED) {
            return invocation.proceed(); // a route whose key is optional, called without one
        }
        if (!(answer instanceof GuardResult result)) {
            return answer; // refused before the guard ran
        }
        if (result instanceof GuardResult.Completed completed && servlet.getResponse() != null
                && request.getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE) instanceof HandlerMethod mapped
                && mapped.getMethod().equals(method)) {
            // This call is the request's handler: answer on the response itself. Spring MVC takes the null
            // ResponseEntity as handled. (Called from other code, the method returns the entity as usual.)
            conversion.write(completed, servlet.getResponse());
            return null;
        }
        return conversion.toEntity(result);
    }

    /** What a request that can be guarded brings: its route's policy, its key and its principal. */
    private record Admitted(IdempotencyPolicy policy, IdempotencyKey key, IdempotencyPrincipal principal) {
    }

    /**
     * The request {@link Admitted} to the guard; or the answer when it cannot be guarded (no key, a malformed key, no
     * principal or tenant); or {@link #UNGUARDED} for a route whose key is optional, called without one.
     */
    private Object admit(Method method, Idempotent route, HttpServletRequest request) {
        IdempotencyPolicy policy = policies.policyFor(method, route);
        List<String> keys = Collections.list(request.getHeaders(IdempotencyKeyHeader.NAME));
        if (keys.isEmpty()) {
            return policy.keyRequired()
                    ? ResponseConversion.problem(HttpStatus.BAD_REQUEST, "IDEMPOTENCY_KEY_MISSING",
                            "This request requires an " + IdempotencyKeyHeader.NAME + " header").build()
                    : UNGUARDED;
        }
        IdempotencyKey key;
        try {
            key = IdempotencyKeyHeader.parse(keys);
        } catch (IdempotencyKeyException e) {
            return ResponseConversion.problem(HttpStatus.BAD_REQUEST, "IDEMPOTENCY_KEY_INVALID", e.getMessage()).build();
        }
        Optional<IdempotencyPrincipal> principal = principals.resolve(request);
        if (principal.isEmpty()) {
            return request.getUserPrincipal() == null
                    ? ResponseConversion.problem(HttpStatus.UNAUTHORIZED, "UNAUTHENTICATED",
                            "Idempotent requests are scoped to an authenticated user").build()
                    : ResponseConversion.problem(HttpStatus.FORBIDDEN, "TENANT_UNRESOLVED",
                            "Idempotent requests are scoped to one tenant, and this user has none or several").build();
        }
        return new Admitted(policy, key, principal.get());
    }

    /** The scope and fingerprint of an {@link Admitted} request, and the guard's run. */
    private GuardResult guard(MethodInvocation invocation, Admitted admitted, HttpServletRequest request)
            throws IOException {
        IdempotencyPrincipal principal = admitted.principal();
        IdempotencyPolicy policy = admitted.policy();
        Route template = Route.of(request.getMethod() + " "
                + request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE));
        IdempotencyScope scope = new IdempotencyScope(principal.tenantId(), principal.userId(), template, admitted.key());
        String hash = RequestFingerprint.of(request.getMethod(), template, target(request), request.getContentType(),
                RequestBodyCapture.body(request, maxRequestBodyBytes));
        return guard.run(MutationRequest.of(scope, hash), policy, context -> {
            CurrentMutation.set(context);
            try {
                return conversion.toStored((ResponseEntity<?>) proceed(invocation));
            } finally {
                CurrentMutation.clear();
            }
        });
    }

    /**
     * The concrete path and every query or form parameter, sorted by name (values in their order): what the route
     * template leaves out, so that it is part of the request's identity.
     */
    static String target(HttpServletRequest request) {
        java.util.Map<String, String[]> given = request.getParameterMap();
        if (given.isEmpty()) {
            return request.getRequestURI();
        }
        StringBuilder target = new StringBuilder(request.getRequestURI());
        java.util.Map<String, String[]> parameters = new java.util.TreeMap<>(given);
        char separator = '?';
        for (java.util.Map.Entry<String, String[]> parameter : parameters.entrySet()) {
            for (String value : parameter.getValue()) {
                target.append(separator).append(encode(parameter.getKey())).append('=').append(encode(value));
                separator = '&';
            }
        }
        return target.toString();
    }

    private static String encode(String value) {
        return java.net.URLEncoder.encode(value, java.nio.charset.StandardCharsets.UTF_8);
    }

    private static Object proceed(MethodInvocation invocation) throws Exception {
        try {
            return invocation.proceed();
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    static Idempotent annotation(MethodInvocation invocation) {
        Method method = invocation.getMethod();
        Idempotent found = AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class);
        if (found == null && invocation.getThis() != null) {
            Method specific = AopUtils.getMostSpecificMethod(method, invocation.getThis().getClass());
            found = AnnotatedElementUtils.findMergedAnnotation(specific, Idempotent.class);
        }
        return found;
    }
}
