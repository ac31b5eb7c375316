package dev.once.guard.internal;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * Logs failures that a client can cause again and again without flooding the log: the first failure of a kind
 * (where it happened and the exception's type) is logged with its stack trace, later ones of that kind at most once
 * per window ({@link #WINDOW} by default), in one line that counts those left out. Thread-safe; the kinds are few (sites times types), so
 * the map stays small.
 */
public final class RateLimitedLog {

    public static final Duration WINDOW = Duration.ofMinutes(1);

    private final Logger log;
    private final long windowNanos;
    private final ConcurrentMap<String, Kind> kinds = new ConcurrentHashMap<>();

    public RateLimitedLog(Logger log) {
        this(log, WINDOW);
    }

    public RateLimitedLog(Logger log, Duration window) {
        this.log = log;
        this.windowNanos = window.toNanos();
    }

    /** Logs {@code failure} at WARN as {@code message} (an SLF4J pattern over {@code arguments}), rate-limited. */
    public void warn(String message, Throwable failure, Object... arguments) {
        Kind kind = kinds.computeIfAbsent(message + '|' + failure.getClass().getName(), k -> new Kind());
        long now = System.nanoTime();
        long last = kind.lastLogged.get();
        if (last != Long.MIN_VALUE && now - last < windowNanos) {
            kind.suppressed.incrementAndGet();
            return;
        }
        if (!kind.lastLogged.compareAndSet(last, now)) {
            kind.suppressed.incrementAndGet(); // another thread logs this kind right now
            return;
        }
        Object[] withFailure = new Object[arguments.length + 1];
        System.arraycopy(arguments, 0, withFailure, 0, arguments.length);
        if (last == Long.MIN_VALUE) {
            withFailure[arguments.length] = failure; // the first of its kind: with the stack trace
            log.warn(message, withFailure);
        } else {
            withFailure[arguments.length] = failure + " (" + kind.suppressed.getAndSet(0)
                    + " more like it since it was last logged; the first was logged with its stack trace)";
            log.warn(message + ": {}", withFailure);
        }
    }

    private static final class Kind {
        final AtomicLong lastLogged = new AtomicLong(Long.MIN_VALUE);
        final AtomicLong suppressed = new AtomicLong();
    }
}
