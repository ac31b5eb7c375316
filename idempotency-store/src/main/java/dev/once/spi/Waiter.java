package dev.once.spi;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * How every long-running loop of Once waits between two rounds: for its pause, or less when it is woken (there is work
 * now) or stopped (the loop ends). A wake that comes while the loop works ends its next pause at once, so no wake is
 * lost. Thread-safe; several threads may wait on it, and {@link #stop()} ends every pause.
 */
public final class Waiter {

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private boolean woken;
    private boolean stopped;

    /** Waits up to {@code pause}; returns {@code false} once the waiter is stopped, {@code true} otherwise. */
    public boolean pause(Duration pause) {
        lock.lock();
        try {
            long left = pause.toNanos();
            while (!woken && !stopped && left > 0) {
                left = changed.awaitNanos(left);
            }
            woken = false;
            return !stopped;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopped = true;
            return false;
        } finally {
            lock.unlock();
        }
    }

    /** Ends the current pause, or the next one, at once. */
    public void wake() {
        signal(false);
    }

    /** Ends every pause from now on: {@link #pause} returns {@code false}. */
    public void stop() {
        signal(true);
    }

    public boolean stopped() {
        lock.lock();
        try {
            return stopped;
        } finally {
            lock.unlock();
        }
    }

    /** Waits up to {@code timeout} for {@code thread} to end, once the waiter is stopped. */
    public static void join(Thread thread, Duration timeout) {
        if (thread == null) {
            return;
        }
        try {
            thread.join(TimeUnit.NANOSECONDS.toMillis(timeout.toNanos()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void signal(boolean stop) {
        lock.lock();
        try {
            woken = true;
            stopped |= stop;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
