package dev.once.outbox;

/**
 * Maps application events of types the application does not own (or would rather not annotate) to outbox events;
 * declare it as a bean. {@link DomainEvents} asks every mapper, in order, before it looks for {@link OutboxMapping}.
 */
@FunctionalInterface
public interface OutboxEventMapper {

    /**
     * The outbox event {@code event} becomes, or null when this mapper does not map its type (it is asked about every
     * application event, so a type check first). Tenant and actor may be left unset inside a guarded call, where the
     * request's are used; outside one they are required.
     */
    OutboxEvent.Builder map(Object event);
}
