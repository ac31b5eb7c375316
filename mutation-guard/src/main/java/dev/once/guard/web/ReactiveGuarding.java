package dev.once.guard.web;

import dev.once.guard.GuardResult;
import dev.once.guard.IdempotencyPolicy;
import dev.once.guard.MutationContext;
import dev.once.guard.MutationRequest;
import dev.once.guard.ReactiveMutationGuard;
import dev.once.guard.internal.RateLimitedLog;
import dev.once.idempotency.IdempotencyKey;
import dev.once.idempotency.IdempotencyKeyException;
import dev.once.idempotency.IdempotencyScope;
import dev.once.idempotency.RequestBodyException;
import dev.once.idempotency.RequestFingerprint;
import dev.once.idempotency.Route;
import dev.once.idempotency.StoredResponse;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.ErrorResponse;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * One guarded WebFlux request, for annotated methods and functional routes alike: the key, the principal, the
 * fingerprint and the guard's run, answered as a {@link GuardResult} (the guard's own refusals included, as
 * completed problems that are never stored), or {@link #UNGUARDED} for a route whose key is optional, called without
 * one. The HTTP contract is Spring MVC's ({@link IdempotentMethodInterceptor}).
 */
final class ReactiveGuarding {

    /** The work runs as it is, without the guard. */
    static final Object UNGUARDED = new Object();
    private static final RateLimitedLog guardErrors = new RateLimitedLog(
            org.slf4j.LoggerFactory.getLogger(ReactiveGuarding.class));

    private final ReactiveMutationGuard guard;
    private final ReactivePrincipalResolver principals;
    private final ReactiveResponseConversion conversion;
    private final int maxRequestBodyBytes;

    ReactiveGuarding(ReactiveMutationGuard guard, ReactivePrincipalResolver principals,
                     ReactiveResponseConversion conversion, int maxRequestBodyBytes) {
        this.guard = guard;
        this.principals = principals;
        this.conversion = conversion;
        this.maxRequestBodyBytes = maxRequestBodyBytes;
    }

    ReactiveResponseConversion conversion() {
        return conversion;
    }

    int maxRequestBodyBytes() {
        return maxRequestBodyBytes;
    }

    /**
     * Guards {@code work} for the request of {@code exchange} on the route {@code template}, its body {@code body}.
     * The work is subscribed only when the key was claimed, with the exchange's {@link MutationContext} bound.
     */
    Mono<Object> guard(ServerWebExchange exchange, IdempotencyPolicy policy, String template, Mono<byte[]> body,
                       Function<MutationContext, Mono<StoredResponse>> work) {
        ServerHttpRequest request = exchange.getRequest();
        List<String> keys = request.getHeaders().get(IdempotencyKeyHeader.NAME);
        if (keys == null || keys.isEmpty()) {
            return Mono.just(policy.keyRequired() ? ReactiveResponseConversion.problem(400, "Bad Request",
                    "IDEMPOTENCY_KEY_MISSING", "This request requires an " + IdempotencyKeyHeader.NAME + " header")
                    : UNGUARDED);
        }
        IdempotencyKey key;
        try {
            key = IdempotencyKeyHeader.parse(keys);
        } catch (IdempotencyKeyException e) {
            return Mono.just(ReactiveResponseConversion.problem(400, "Bad Request", "IDEMPOTENCY_KEY_INVALID",
                    e.getMessage()));
        }
        Route route = Route.of(request.getMethod().name() + " " + template);
        return principals.resolve(exchange).<Object>flatMap(principal -> body.map(bytes -> {
            IdempotencyScope scope = new IdempotencyScope(principal.tenantId(), principal.userId(), route, key);
            String contentType = request.getHeaders().getFirst(org.springframework.http.HttpHeaders.CONTENT_TYPE);
            return MutationRequest.of(scope, RequestFingerprint.of(request.getMethod().name(), route, target(request),
                    contentType, bytes));
        }).flatMap(mutation -> guard.run(mutation, policy, context -> {
            ExchangeMutations.of(exchange).bind(context);
            return work.apply(context);
        }))).switchIfEmpty(Mono.defer(() -> unauthenticated(exchange))).onErrorResume(RuntimeException.class,
                e -> Mono.just(failure(request, template, e)));
    }

    private static Mono<Object> unauthenticated(ServerWebExchange exchange) {
        return exchange.getPrincipal().filter(ExchangePrincipals::authenticated).hasElement().map(known -> known
                ? ReactiveResponseConversion.problem(403, "Forbidden", "TENANT_UNRESOLVED",
                        "Idempotent requests are scoped to one tenant, and this user has none or several")
                : ReactiveResponseConversion.problem(401, "Unauthorized", "UNAUTHENTICATED",
                        "Idempotent requests are scoped to an authenticated user"));
    }

    /** A failure of the guard itself, or the client's found before anything was claimed: never stored. */
    private static GuardResult failure(ServerHttpRequest request, String template, RuntimeException e) {
        if (e instanceof RequestBodyException body) {
            return ReactiveResponseConversion.problem(400, "Bad Request", body.problem().code(), e.getMessage());
        }
        if (e instanceof ErrorResponse error) { // e.g. 413 for a body over the limit
            return new GuardResult.Completed(WebFailureMapper.problem(error.getStatusCode().value(), error.getBody()),
                    null, null, false);
        }
        guardErrors.warn("Guard of {} failed", e, request.getMethod().name() + " " + template);
        return ReactiveResponseConversion.problem(500, "Internal Server Error",
                IdempotentMethodInterceptor.GUARD_ERROR,
                "The idempotency guard failed; nothing of this request was stored. Retry with the same Idempotency-Key.");
    }

    /** The concrete path and every query parameter, sorted by name (values in their order), as on Spring MVC. */
    static String target(ServerHttpRequest request) {
        String path = request.getPath().pathWithinApplication().value();
        if (request.getQueryParams().isEmpty()) {
            return path;
        }
        StringBuilder target = new StringBuilder(path);
        char separator = '?';
        for (Map.Entry<String, List<String>> parameter : new TreeMap<>(request.getQueryParams()).entrySet()) {
            for (String value : parameter.getValue()) {
                target.append(separator).append(encode(parameter.getKey())).append('=').append(encode(value));
                separator = '&';
            }
        }
        return target.toString();
    }

    private static String encode(String value) {
        return java.net.URLEncoder.encode(value == null ? "" : value, java.nio.charset.StandardCharsets.UTF_8);
    }
}
