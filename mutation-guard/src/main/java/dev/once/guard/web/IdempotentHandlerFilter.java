package dev.once.guard.web;

import dev.once.guard.GuardResult;
import dev.once.guard.IdempotencyPolicy;
import dev.once.guard.MutationContext;
import dev.once.idempotency.RequestBodyException;
import java.util.function.Supplier;
import org.springframework.core.codec.DecodingException;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.util.pattern.PathPattern;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@link Idempotent} for WebFlux functional routes: a filter that runs the route's handler at most once per key,
 * with the same HTTP contract. Apply it to the routes that need it, and only to them:
 * <pre>{@code
 * route().POST("/accounts", accounts::create).filter(idempotent).build();
 * route().POST("/payments", payments::pay).filter(idempotent.withPolicy(IdempotencyPolicy.custom().lease(...).build()))
 * }</pre>
 * The handler reads the body as usual (the filter reads it first, for the fingerprint, and hands it on) and reaches
 * its {@link MutationContext} with {@link #context(ServerRequest)}. A body the handler cannot decode is the client's
 * error, as on an annotated route: 400 {@code MALFORMED_BODY}, not stored, the key free again. Its response is rendered with the application's
 * codecs, stored, and replayed byte for byte.
 */
public final class IdempotentHandlerFilter implements HandlerFilterFunction<ServerResponse, ServerResponse> {

    private final Supplier<ReactiveGuarding> guarding;
    private final Supplier<IdempotencyPolicy> policy;

    IdempotentHandlerFilter(Supplier<ReactiveGuarding> guarding, Supplier<IdempotencyPolicy> policy) {
        this.guarding = guarding;
        this.policy = policy;
    }

    /** This filter with {@code policy} instead of the configured defaults. */
    public IdempotentHandlerFilter withPolicy(IdempotencyPolicy policy) {
        return new IdempotentHandlerFilter(guarding, () -> policy);
    }

    /** The guarded run's context of {@code request}, while the filtered handler's work runs. */
    public static MutationContext context(ServerRequest request) {
        return ExchangeMutations.of(request.exchange());
    }

    @Override
    public Mono<ServerResponse> filter(ServerRequest request, HandlerFunction<ServerResponse> next) {
        if (ExchangeCapture.SAFE_METHODS.contains(request.method().name())) {
            return next.handle(request);
        }
        ReactiveGuarding guard = guarding.get();
        String template = request.attribute(RouterFunctions.MATCHING_PATTERN_ATTRIBUTE)
                .map(p -> ((PathPattern) p).getPatternString()).orElse(request.path());
        Mono<byte[]> body = ExchangeCapture.read(request.exchange().getRequest().getBody(), guard.maxRequestBodyBytes())
                .cache();
        ExchangeMutations.of(request.exchange()); // before the copy below, which takes the attributes along
        return body.onErrorResume(e -> Mono.empty()).defaultIfEmpty(new byte[0]).flatMap(bytes -> {
            ServerRequest again = ServerRequest.from(request)
                    .body(Flux.defer(() -> Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(bytes)))).build();
            return guard.guard(request.exchange(), policy.get(), template, body,
                            context -> next.handle(again)
                                    .onErrorMap(e -> ReactiveGuardedRouteErrors.hasCause(e, DecodingException.class),
                                            e -> new RequestBodyException(RequestBodyException.Problem.MALFORMED,
                                                    "The body could not be read: " + e.getMessage()))
                                    .flatMap(r -> guard.conversion().toStored(r, again.exchange())))
                    .flatMap(answer -> answer == ReactiveGuarding.UNGUARDED ? next.handle(again)
                            : guard.conversion().toServerResponse((GuardResult) answer));
        });
    }
}
