package dev.once.guard;

import dev.once.idempotency.ClaimToken;
import dev.once.idempotency.IdempotencyScope;
import dev.once.outbox.OutboxEvent;
import java.util.UUID;

/**
 * What a {@link MutationHandler} may do besides its own writes: append outbox events and bind a task id. Both are
 * bound to the idempotency record in the same transaction, so a retry gets the same task id and outbox event id back
 * and never submits twice. Not thread-safe: use it on the handler's thread.
 */
public interface MutationContext {

    IdempotencyScope scope();

    /**
     * The claim's token. It names this execution, not the request: the fencing token moves on with every execution,
     * and the record id is kept when the key is reused after its TTL. To name the request in calls to other services
     * (their idempotency key, a file name), derive it from {@link #scope()} or from the request's content, which every
     * execution of one request shares.
     */
    ClaimToken token();

    /**
     * Appends {@code event} to the outbox in the handler's transaction and returns its id. The row is written when the
     * handler returns, by the statement that completes the record and binds the first event's id to it; if the
     * handler fails, no row is written.
     */
    UUID append(OutboxEvent event);

    /**
     * An event builder with tenant and actor taken from the request's scope: finish it and pass it to
     * {@link #append}.
     */
    default OutboxEvent.Builder event(String aggregateType, String aggregateId, String eventType, int version) {
        return OutboxEvent.builder().tenantId(scope().tenantId()).actorId(scope().userId())
                .aggregate(aggregateType, aggregateId).type(eventType, version);
    }

    /** Binds the id of the task this request submitted; a replay returns it. */
    void bindTask(String taskId);
}
