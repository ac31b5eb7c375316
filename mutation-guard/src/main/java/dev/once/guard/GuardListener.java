package dev.once.guard;

import java.time.Duration;

/**
 * Observes the guard. The default does nothing; the Boot autoconfiguration binds Micrometer when it is present.
 * Called on the request thread; implementations must be fast and thread-safe.
 */
public interface GuardListener {

    GuardListener NONE = new GuardListener() { };

    /** One of {@code claimed}, {@code replayed}, {@code in_progress}, {@code conflict}, {@code failed}. */
    default void onOutcome(String outcome) {
    }

    /** How long one {@link IdempotencyMutationGuard#run} took, and its outcome. */
    default void onRun(String outcome, Duration elapsed) {
    }
}
