package dev.once.guard.web;

import dev.once.idempotency.StoredResponse;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.codec.DecodingException;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponse;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;

/**
 * Answers what WebFlux refuses on an {@link Idempotent} route before the guard runs (a body that does not decode or
 * is over the codecs' limit, an unsupported media type, a missing parameter, an argument that does not convert) as
 * problem+json with a stable {@code code}, as {@link GuardedRouteErrors} does on Spring MVC: a body that does not
 * decode is {@code MALFORMED_BODY}, anything else the name of its status. It runs before Spring Boot's error handler,
 * touches no other route and no exception that is not one of Spring's own {@link ErrorResponse}s.
 */
final class ReactiveGuardedRouteErrors implements WebExceptionHandler, Ordered {

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable failure) {
        Object handler = exchange.getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE);
        if (!(failure instanceof ErrorResponse error) || !(handler instanceof HandlerMethod method)
                || !AnnotatedElementUtils.hasAnnotation(method.getMethod(), Idempotent.class)
                || exchange.getResponse().isCommitted()) {
            return Mono.error(failure);
        }
        ProblemDetail detail = error.getBody();
        if (hasCause(failure, DecodingException.class)) {
            detail.setProperty("code", "MALFORMED_BODY");
        }
        StoredResponse problem = WebFailureMapper.problem(error.getStatusCode().value(), detail);
        exchange.getResponse().setStatusCode(error.getStatusCode());
        exchange.getResponse().getHeaders().addAll(error.getHeaders());
        exchange.getResponse().getHeaders().set(org.springframework.http.HttpHeaders.CONTENT_TYPE, problem.contentType());
        return exchange.getResponse().writeWith(Mono.fromSupplier(
                () -> exchange.getResponse().bufferFactory().wrap(problem.body())));
    }

    static boolean hasCause(Throwable failure, Class<? extends Throwable> type) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    /** Before Spring Boot's error handler (-2) and WebFlux's status handler (0). */
    @Override
    public int getOrder() {
        return -3;
    }
}
