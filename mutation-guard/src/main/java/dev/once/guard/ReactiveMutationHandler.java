package dev.once.guard;

import dev.once.idempotency.StoredResponse;
import reactor.core.publisher.Mono;

/**
 * The work of a guarded request on a reactive stack, run at most once per key by the {@link ReactiveMutationGuard}.
 * What the returned {@code Mono} does is the work: subscribed once, inside the guard's transaction (see
 * {@link ReactiveMutationGuard} for which one), with the outbox rows appended through {@link MutationContext} and the
 * stored response committing with it.
 */
@FunctionalInterface
public interface ReactiveMutationHandler {

    Mono<StoredResponse> handle(MutationContext context);
}
