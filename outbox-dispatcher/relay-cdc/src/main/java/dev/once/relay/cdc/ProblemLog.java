package dev.once.relay.cdc;

import java.time.Duration;
import org.slf4j.Logger;

/**
 * Says why a relay cannot lead without flooding the log while that lasts: a problem is logged when it appears or
 * changes, then at most once per {@link #EVERY} (by default) in one line that counts the attempts in between, and once at INFO when
 * it is over. Only an unexpected failure carries its stack trace, and only the first time: a misconfiguration's
 * message is the whole story, and an outage's trace tells nothing. Every occurrence is also logged at DEBUG with its
 * stack trace. Used by one thread (the election's).
 */
final class ProblemLog {

    static final Duration EVERY = Duration.ofMinutes(1);

    /** What kind of problem, which decides the level and whether the first report carries a stack trace. */
    enum Kind {
        /** Only an operator can fix it; the message names how: ERROR, never a stack trace. */
        MISCONFIGURATION,
        /** Nobody foresaw it: ERROR, the stack trace the first time. */
        FAILURE,
        /** PostgreSQL is unreachable or restarting; it passes by itself: WARN, never a stack trace. */
        OUTAGE
    }

    private final Logger log;
    private final String relay;
    private final long windowNanos;
    private String current;
    private long loggedAt;
    private int attemptsSince;

    ProblemLog(Logger log, String relay) {
        this(log, relay, EVERY);
    }

    ProblemLog(Logger log, String relay, Duration window) {
        this.log = log;
        this.relay = relay;
        this.windowNanos = window.toNanos();
    }

    void report(String summary, Throwable cause, Kind kind, Duration retryIn) {
        log.debug("CDC relay {} cannot lead: {}", relay, summary, cause);
        long now = System.nanoTime();
        // The same problem, though a number in it moved (a PID, an LSN, a count): not news, not to be logged again.
        boolean same = current != null && shape(summary).equals(shape(current));
        if (same && now - loggedAt < windowNanos) {
            attemptsSince++;
            return;
        }
        String again = same ? " (failed " + (attemptsSince + 1) + " times since it was last logged)" : "";
        String pattern = "CDC relay {} cannot lead{}; next attempt in {} s: {}";
        Object[] arguments = {relay, again, seconds(retryIn), summary};
        if (kind == Kind.OUTAGE) {
            log.warn(pattern, arguments);
        } else if (kind == Kind.FAILURE && !same) {
            log.error(pattern, relay, again, seconds(retryIn), summary, cause);
        } else {
            log.error(pattern, arguments);
        }
        current = summary;
        loggedAt = now;
        attemptsSince = 0;
    }

    private static String shape(String summary) {
        return summary.replaceAll("[0-9]+", "#");
    }

    static String seconds(Duration pause) {
        return pause.toMillis() % 1000 == 0 ? Long.toString(pause.toSeconds()) : Double.toString(pause.toMillis() / 1000.0);
    }

    /** The relay leads again: the problem last reported is over. */
    void resolved() {
        if (current != null) {
            log.info("CDC relay {} leads again; this is over: {}", relay, current);
            current = null;
        }
    }
}
