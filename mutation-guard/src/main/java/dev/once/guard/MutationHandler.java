package dev.once.guard;

import dev.once.idempotency.StoredResponse;

/**
 * The work a guarded request does, run at most once per key. It runs inside the guard's phase-2 transaction: its
 * business writes, the outbox rows it appends through {@link MutationContext}, and the stored response commit
 * together or not at all. A response of status 400 or more, or an exception, rolls the transaction back.
 */
@FunctionalInterface
public interface MutationHandler {

    StoredResponse handle(MutationContext context) throws Exception;
}
