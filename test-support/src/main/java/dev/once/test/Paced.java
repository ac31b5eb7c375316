package dev.once.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/** A steady load for benchmarks: operations at a fixed rate from a few paced threads, not as fast as they can. */
public final class Paced {

    private Paced() {
    }

    /** One operation of a paced load: the thread's {@code n}-th. */
    @FunctionalInterface
    public interface Operation {
        void run(int n);
    }

    /**
     * Runs {@code operation} at {@code rate} per second in all for {@code duration}, from {@code threads} threads each
     * keeping its own schedule (a late operation is followed by the next at once, so the mean rate holds); returns how
     * many ran.
     */
    public static long run(int threads, int rate, Duration duration, Operation operation) throws InterruptedException {
        AtomicLong done = new AtomicLong();
        long interval = 1_000_000_000L * threads / rate;
        long end = System.nanoTime() + duration.toNanos();
        List<Thread> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread thread = new Thread(() -> {
                long next = System.nanoTime();
                int n = 0;
                while (next < end) {
                    operation.run(n++);
                    done.incrementAndGet();
                    next += interval;
                    LockSupport.parkNanos(Math.max(0, next - System.nanoTime()));
                }
            });
            thread.start();
            running.add(thread);
        }
        for (Thread thread : running) {
            thread.join();
        }
        return done.get();
    }
}
