package dev.once.dispatch;

import io.micrometer.observation.Observation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What happened to claims in one attempt, told to the {@link DispatchListener} and ended as observations only once it
 * is final: after the transaction that made it committed (handled, skipped), or when a handler's failure is its own
 * and not an attempt rolled back to be retried smaller ({@link #rolledBack}). So every outcome is counted once. Used
 * by one thread.
 */
final class Outcomes {

    private record Outcome(String handlerKey, Duration elapsed, Observation observation) {
    }

    private final List<Outcome> handled = new ArrayList<>();
    private final List<Outcome> skipped = new ArrayList<>();

    void handled(String handlerKey, Duration elapsed, Observation observation) {
        handled.add(new Outcome(handlerKey, elapsed, observation));
    }

    void skipped(String handlerKey, Observation observation) {
        skipped.add(new Outcome(handlerKey, null, observation));
    }

    /** Tells the listener and ends the observations; call after the attempt committed. */
    void fire(DispatchListener listener) {
        handled.forEach(h -> {
            HandlingObservations.stop(h.observation(), "handled");
            listener.handled(h.handlerKey(), h.elapsed());
        });
        skipped.forEach(s -> {
            HandlingObservations.stop(s.observation(), "skipped");
            listener.skippedDuplicate(s.handlerKey());
        });
    }

    /** Ends the observations of an attempt that rolled back: nothing of it took effect, and the listener hears none. */
    void rolledBack() {
        handled.forEach(h -> HandlingObservations.stop(h.observation(), "rolled_back"));
        skipped.forEach(s -> HandlingObservations.stop(s.observation(), "rolled_back"));
    }
}
