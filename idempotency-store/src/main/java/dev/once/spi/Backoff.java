package dev.once.spi;

import java.time.Duration;

/**
 * The pause of a loop after a failure: {@code first}, then twice the last pause, up to {@code max}, until a success
 * resets it. Immutable settings, mutable count: one per loop (or per worker), used by one thread.
 */
public final class Backoff {

    private final Duration first;
    private final Duration max;
    private Duration current = Duration.ZERO;

    public Backoff(Duration first, Duration max) {
        if (first == null || max == null || first.isNegative() || first.isZero() || max.compareTo(first) < 0) {
            throw new IllegalArgumentException("the first pause must be positive and the longest at least as long, "
                    + "were " + first + " and " + max);
        }
        this.first = first;
        this.max = max;
    }

    /** The pause after one more failure. */
    public Duration next() {
        Duration doubled = current.isZero() ? first : current.multipliedBy(2);
        current = doubled.compareTo(max) > 0 ? max : doubled;
        return current;
    }

    /** A success: the next failure pauses {@code first} again. */
    public void reset() {
        current = Duration.ZERO;
    }
}
