package dev.once.dispatch;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What happened to claims in one attempt, told to the {@link DispatchListener} only once it is final: after the
 * transaction that made it committed (handled, skipped), or when a handler's failure is its own and not an attempt
 * rolled back to be retried smaller. So every outcome is counted once. Used by one thread.
 */
final class Outcomes {

    private record Handled(String handlerKey, Duration elapsed) {
    }

    private final List<Handled> handled = new ArrayList<>();
    private final List<String> skipped = new ArrayList<>();

    void handled(String handlerKey, Duration elapsed) {
        handled.add(new Handled(handlerKey, elapsed));
    }

    void skipped(String handlerKey) {
        skipped.add(handlerKey);
    }

    /** Tells the listener; call after the attempt committed. */
    void fire(DispatchListener listener) {
        handled.forEach(h -> listener.handled(h.handlerKey(), h.elapsed()));
        skipped.forEach(listener::skippedDuplicate);
    }
}
