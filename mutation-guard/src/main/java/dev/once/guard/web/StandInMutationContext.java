package dev.once.guard.web;

import dev.once.guard.MutationContext;
import dev.once.idempotency.ClaimToken;
import dev.once.idempotency.IdempotencyScope;
import dev.once.outbox.OutboxEvent;
import java.util.UUID;

/**
 * A controller's {@link MutationContext} parameter: arguments are resolved before the guard claims the key, so the
 * parameter stands in for the context of the guarded run, found by {@link #current()} (a thread's on Spring MVC, an
 * exchange's on WebFlux); using it anywhere else is an error.
 */
abstract class StandInMutationContext implements MutationContext {

    /** The guarded run's context, or {@code null} outside one. */
    abstract MutationContext bound();

    private MutationContext current() {
        MutationContext context = bound();
        if (context == null) {
            throw new IllegalStateException("MutationContext is only available while an @Idempotent method's work runs");
        }
        return context;
    }

    @Override
    public IdempotencyScope scope() {
        return current().scope();
    }

    @Override
    public ClaimToken token() {
        return current().token();
    }

    @Override
    public UUID append(OutboxEvent event) {
        return current().append(event);
    }

    @Override
    public OutboxEvent.Builder event(String aggregateType, String aggregateId, String eventType, int version) {
        return current().event(aggregateType, aggregateId, eventType, version);
    }

    @Override
    public void bindTask(String taskId) {
        current().bindTask(taskId);
    }
}
