package dev.once.spi;

import java.time.Duration;

/**
 * A loop that runs a round every interval on a daemon thread of its own, the first at once, until it is closed: how
 * Once's sweeps run. A round's failure is the round's to handle; the loop goes on. Thread-safe.
 */
public final class Rounds implements AutoCloseable {

    private final String name;
    private final Duration interval;
    private final Runnable round;
    private final Waiter waiter = new Waiter();
    private Thread thread;

    /** Rounds of {@code round} every {@code interval}, on a thread named {@code name}. */
    public Rounds(String name, Duration interval, Runnable round) {
        this.name = name;
        this.interval = interval;
        this.round = round;
    }

    /** Starts the thread, once; a closed loop does not start again. */
    public synchronized void start() {
        if (thread != null || waiter.stopped()) {
            return;
        }
        thread = new Thread(() -> {
            do {
                round.run();
            } while (waiter.pause(interval));
        }, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Whether the loop was closed: a round under way may stop early. */
    public boolean closing() {
        return waiter.stopped();
    }

    /** Waits {@code pause} within a round, or less once the loop is closed; false then. */
    public boolean pause(Duration pause) {
        return waiter.pause(pause);
    }

    /** Stops the loop, letting a round under way finish; waits up to 30 seconds. */
    @Override
    public void close() {
        waiter.stop();
        Thread current;
        synchronized (this) {
            current = thread;
        }
        Waiter.join(current, Duration.ofSeconds(30));
    }
}
