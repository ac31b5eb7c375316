package dev.once.spi;

import dev.once.outbox.OutboxEvent;
import java.util.UUID;
import java.util.function.Function;

/**
 * The guarded call running on this thread, if any: domain events published during it are appended through it, and
 * so bound to its idempotency record like {@code MutationContext.append}, with its tenant and user.
 */
public final class CurrentOutbox {

    /** Where a guarded call's events go, and whom they are for. */
    public record Target(String tenantId, String actorId, Function<OutboxEvent, UUID> append) {
    }

    private static final ThreadLocal<Target> CURRENT = new ThreadLocal<>();

    private CurrentOutbox() {
    }

    /** The guarded call on this thread, or null. */
    public static Target current() {
        return CURRENT.get();
    }

    /** Makes {@code target} current and returns the one it replaces, for {@link #restore}. */
    public static Target bind(Target target) {
        Target previous = CURRENT.get();
        CURRENT.set(target);
        return previous;
    }

    public static void restore(Target previous) {
        if (previous == null) {
            CURRENT.remove();
        } else {
            CURRENT.set(previous);
        }
    }
}
