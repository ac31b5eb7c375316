package dev.once.relay.internal;

import java.time.Duration;
import org.slf4j.Logger;

/**
 * Internal to Once's relays; not an API. Says why a relay backs off without flooding the log: a new reason at once,
 * the same reason again at most once per {@link #INTERVAL} with the count of attempts since, and the recovery. Never
 * with a stack trace: the reason names the fault and its fix, and a trace per retry would bury it. Thread-safe.
 */
public final class BackoffLog {

    public static final Duration INTERVAL = Duration.ofMinutes(1);

    private final Logger log;
    private final String relay;
    private final long intervalNanos;
    private String reason;
    private long loggedAt;
    private long attempts;
    private long unlogged;

    public BackoffLog(Logger log, String relay) {
        this(log, relay, INTERVAL);
    }

    public BackoffLog(Logger log, String relay, Duration interval) {
        this.log = log;
        this.relay = relay;
        this.intervalNanos = interval.toNanos();
    }

    /** The relay gave a batch up because of {@code why}, and waits {@code pause} before it tries again. */
    public synchronized void backingOff(String why, Duration pause) {
        long now = System.nanoTime();
        attempts++;
        if (why.equals(reason) && now - loggedAt < intervalNanos) {
            unlogged++;
            return;
        }
        if (why.equals(reason)) {
            log.warn("{} still backs off ({} attempts, {} since last said; next in {} ms): {}", relay, attempts,
                    unlogged, pause.toMillis(), why);
        } else {
            log.warn("{} backs off (next attempt in {} ms, then at most one line a minute while this lasts): {}",
                    relay, pause.toMillis(), why);
        }
        reason = why;
        loggedAt = now;
        unlogged = 0;
    }

    /** The relay published again; said once, when it had been backing off. */
    public synchronized void recovered() {
        if (reason != null) {
            log.info("{} publishes again after {} attempts", relay, attempts);
        }
        reason = null;
        attempts = 0;
        unlogged = 0;
    }
}
