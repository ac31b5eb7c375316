package dev.once.spi;

import org.springframework.context.SmartLifecycle;

/**
 * Internal to Once's autoconfigurations; not an API. A {@link SmartLifecycle} that runs {@code start} when the
 * application context starts and {@code stop} when it stops, and says it runs in between: how each of Once's
 * background parts (relay, dispatcher, retention sweep) is tied to the service's life.
 */
public final class RunningLifecycle implements SmartLifecycle {

    private final Runnable start;
    private final Runnable stop;
    private volatile boolean running;

    private RunningLifecycle(Runnable start, Runnable stop) {
        this.start = start;
        this.stop = stop;
    }

    public static SmartLifecycle of(Runnable start, Runnable stop) {
        return new RunningLifecycle(start, stop);
    }

    @Override
    public void start() {
        start.run();
        running = true;
    }

    @Override
    public void stop() {
        try {
            stop.run();
        } finally {
            running = false;
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }
}
