package dev.once.spi;

import java.time.Duration;
import org.slf4j.Logger;

/**
 * Says why a loop cannot do its work without flooding the log while that lasts: a problem is logged when it appears
 * or changes, then at most once per {@link #WINDOW} in one line that counts the attempts in between, and once at INFO
 * when it is over. A problem whose message differs only in its numbers (a PID, an LSN, a count) is the same problem.
 * Only an unforeseen failure carries its stack trace, and only the first time: a misconfiguration's message names its
 * fix, and an outage's trace tells nothing. Every occurrence is also logged at DEBUG, with its stack trace.
 * Thread-safe.
 */
public final class RateLimitedLog {

    public static final Duration WINDOW = Duration.ofMinutes(1);

    /** What kind of problem: it decides the level, and whether the first report carries a stack trace. */
    public enum Kind {
        /** Only an operator can end it, and the message says how: ERROR, never a stack trace. */
        MISCONFIGURATION,
        /** Nobody foresaw it: ERROR, with the stack trace the first time. */
        FAILURE,
        /** A server is out of reach or restarting; it passes by itself: WARN, never a stack trace. */
        OUTAGE
    }

    private final Logger log;
    private final String subject;
    private final long windowNanos;
    private String current;
    private long loggedAt;
    private int attemptsSince;

    /** Logs to {@code log} about {@code subject}, e.g. "CDC relay cdc". */
    public RateLimitedLog(Logger log, String subject) {
        this(log, subject, WINDOW);
    }

    public RateLimitedLog(Logger log, String subject, Duration window) {
        this.log = log;
        this.subject = subject;
        this.windowNanos = window.toNanos();
    }

    /** {@code problem} stopped an attempt; the next one comes in {@code retryIn}. */
    public synchronized void report(String problem, Throwable cause, Kind kind, Duration retryIn) {
        log.debug("{}: {}", subject, problem, cause);
        long now = System.nanoTime();
        boolean same = current != null && shape(problem).equals(shape(current));
        if (same && now - loggedAt < windowNanos) {
            attemptsSince++;
            return;
        }
        String again = same ? " (" + (attemptsSince + 1) + " attempts since it was last logged)" : "";
        String pattern = "{}: {}; next attempt in {} s{}";
        if (kind == Kind.OUTAGE) {
            log.warn(pattern, subject, problem, seconds(retryIn), again);
        } else if (kind == Kind.FAILURE && !same) {
            log.error(pattern, subject, problem, seconds(retryIn), again, cause);
        } else {
            log.error(pattern, subject, problem, seconds(retryIn), again);
        }
        current = problem;
        loggedAt = now;
        attemptsSince = 0;
    }

    /** The work succeeded: the problem last reported, if any, is over, and said so once. */
    public synchronized void resolved() {
        if (current != null) {
            log.info("{}: over: {}", subject, current);
            current = null;
        }
    }

    /** Whether a problem is reported and not yet over. */
    public synchronized boolean reporting() {
        return current != null;
    }

    private static String shape(String problem) {
        return problem.replaceAll("[0-9]+", "#");
    }

    /** A pause in seconds as the log prints it: whole seconds, or with a fraction under a second. */
    public static String seconds(Duration pause) {
        return pause.toMillis() % 1000 == 0 ? Long.toString(pause.toSeconds()) : Double.toString(pause.toMillis() / 1000.0);
    }
}
