package dev.once.outbox;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Maps an application event class to an outbox event, so that publishing it ({@code ApplicationEventPublisher}, or
 * an aggregate's {@code registerEvent} that Spring Data publishes on {@code save}) appends it to the outbox in the
 * publishing transaction ({@link DomainEvents}). The payload is the event itself as JSON. Accessors are named, not
 * annotated: each is a public no-argument method of that name ({@code accountId()}), its getter ({@code getAccountId()})
 * or a field.
 *
 * <pre>{@code
 * @OutboxMapping(aggregate = "account", aggregateId = "accountId", type = "AccountCreated", version = 1)
 * public record AccountCreated(UUID accountId, String tenantId, String actorId, String email) {}
 * }</pre>
 *
 * For a type the application does not own, declare an {@link OutboxEventMapper} bean instead.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface OutboxMapping {

    /** The aggregate type ({@code account}): with the default routing, the topic's last part. */
    String aggregate();

    /** The accessor of the aggregate id: the record key on Kafka, so an aggregate's events keep their order. */
    String aggregateId() default "aggregateId";

    /** The event type; the class's simple name when left empty. */
    String type() default "";

    /** The version of the payload's shape. */
    int version() default 1;

    /**
     * The accessor of the tenant, used outside a guarded call. Inside one, the request's tenant (from the
     * authenticated principal) is used, whatever the event says.
     */
    String tenantId() default "tenantId";

    /** The accessor of the actor, used outside a guarded call; inside one, the request's user. */
    String actorId() default "actorId";
}
