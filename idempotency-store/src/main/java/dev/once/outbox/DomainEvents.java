package dev.once.outbox;

import dev.once.OnceConfigurationException;
import dev.once.OnceException;
import dev.once.spi.CurrentOutbox;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import org.springframework.context.event.EventListener;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Application events into the outbox. An event whose type is mapped (an {@link OutboxEventMapper} bean, or
 * {@link OutboxMapping} on its class) is appended in the transaction that publishes it, before that transaction
 * commits: one an aggregate registered ({@code AbstractAggregateRoot.registerEvent}, {@code @DomainEvents}) and Spring
 * Data published on {@code save}, or one passed to {@code ApplicationEventPublisher.publishEvent}. It commits with the
 * business change or rolls back with it; it is never left to an after-commit listener. Inside a guarded call it is
 * bound to the idempotency record exactly as {@code MutationContext.append} binds (the first event's id becomes the
 * record's {@code outbox_event_id}; a replay runs nothing and so emits nothing), with the request's tenant and user.
 * Events of other types are left alone. Thread-safe.
 */
public final class DomainEvents {

    private final OutboxWriter writer;
    private final List<OutboxEventMapper> mappers;
    private final ClassValue<Mapping> annotated = new ClassValue<>() {
        @Override
        protected Mapping computeValue(Class<?> type) {
            OutboxMapping mapping = type.getAnnotation(OutboxMapping.class);
            return mapping == null ? null : Mapping.of(type, mapping);
        }
    };

    public DomainEvents(OutboxWriter writer, List<OutboxEventMapper> mappers) {
        this.writer = writer;
        this.mappers = List.copyOf(mappers);
    }

    /** Spring's entry point: every application event published in this context passes here. */
    @EventListener
    public void onApplicationEvent(Object event) {
        append(event);
    }

    /**
     * Appends {@code event} to the outbox when its type is mapped, and returns the outbox event's id; null when it is
     * not mapped.
     *
     * @throws OutboxTransactionException when it is mapped and no transaction is active (it would otherwise
     *         autocommit apart from the change it describes, or be lost)
     * @throws OnceException when it is mapped and, outside a guarded call, has no tenant or actor
     */
    public UUID append(Object event) {
        OutboxEvent.Builder builder = map(event);
        if (builder == null) {
            return null;
        }
        String type = event.getClass().getName();
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new OutboxTransactionException("The event " + type + " is mapped to the outbox and was published "
                    + "outside a transaction: publish it inside @Transactional (or a guarded request), so that it "
                    + "commits or rolls back with the change it describes");
        }
        CurrentOutbox.Target guarded = CurrentOutbox.current();
        if (guarded != null) {
            return guarded.append().apply(build(builder.tenantId(guarded.tenantId()).actorId(guarded.actorId()), type, ""));
        }
        return writer.append(build(builder, type, "; outside a guarded request its tenant and actor come from the event: "
                + "give it the accessors @OutboxMapping names (tenantId and actorId by default), or set them in its "
                + "OutboxEventMapper"));
    }

    private static OutboxEvent build(OutboxEvent.Builder builder, String type, String hint) {
        try {
            return builder.build();
        } catch (IllegalArgumentException e) {
            throw new OnceException("The event " + type + " is mapped to the outbox, and " + e.getMessage() + hint, e);
        }
    }

    private OutboxEvent.Builder map(Object event) {
        for (OutboxEventMapper mapper : mappers) {
            OutboxEvent.Builder builder = mapper.map(event);
            if (builder != null) {
                return builder;
            }
        }
        Mapping mapping = annotated.get(event.getClass());
        return mapping == null ? null : mapping.builder(event, writer.event());
    }

    /** An {@link OutboxMapping} worked out once per class: its accessors found. */
    private record Mapping(String aggregate, Function<Object, Object> aggregateId, String type, int version,
                           Function<Object, Object> tenantId, Function<Object, Object> actorId) {

        static Mapping of(Class<?> type, OutboxMapping mapping) {
            Function<Object, Object> id = accessor(type, mapping.aggregateId());
            if (id == null) {
                throw new OnceConfigurationException(type.getName() + " is mapped to the outbox, and has no accessor '"
                        + mapping.aggregateId() + "' for its aggregate id",
                        "Name the accessor of the aggregate id in @OutboxMapping(aggregateId = \"...\")");
            }
            return new Mapping(mapping.aggregate(), id, mapping.type().isEmpty() ? type.getSimpleName() : mapping.type(),
                    mapping.version(), accessor(type, mapping.tenantId()), accessor(type, mapping.actorId()));
        }

        /** {@code builder} from the writer: the payload is the event serialised with the application's mapper. */
        OutboxEvent.Builder builder(Object event, OutboxEvent.Builder builder) {
            Object id = aggregateId.apply(event);
            return builder.aggregate(aggregate, id == null ? null : id.toString()).type(type, version)
                    .tenantId(text(tenantId, event)).actorId(text(actorId, event)).payload(event);
        }

        private static String text(Function<Object, Object> accessor, Object event) {
            Object value = accessor == null ? null : accessor.apply(event);
            return value == null ? null : value.toString();
        }

        /** A public no-argument method {@code name} or {@code getName}, or a field {@code name}; null when none. */
        private static Function<Object, Object> accessor(Class<?> type, String name) {
            for (String candidate : List.of(name, "get" + Character.toUpperCase(name.charAt(0)) + name.substring(1))) {
                try {
                    Method method = type.getMethod(candidate);
                    if (!Modifier.isStatic(method.getModifiers()) && method.getReturnType() != void.class) {
                        method.setAccessible(true);
                        return event -> invoke(method, event);
                    }
                } catch (NoSuchMethodException | RuntimeException absent) {
                    // try the next form
                }
            }
            for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
                try {
                    Field field = c.getDeclaredField(name);
                    field.setAccessible(true);
                    return event -> read(field, event);
                } catch (NoSuchFieldException | RuntimeException absent) {
                    // look in the superclass
                }
            }
            return null;
        }

        private static Object invoke(Method method, Object event) {
            try {
                return method.invoke(event);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            } catch (InvocationTargetException e) {
                throw new OnceException("The accessor " + method + " of an outbox-mapped event failed", e.getCause());
            }
        }

        private static Object read(Field field, Object event) {
            try {
                return field.get(event);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
