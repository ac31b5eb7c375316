package dev.once.guard.app;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.stereotype.Component;

/**
 * Test instrumentation of the test application (never of the library): counts handler runs per route, holds
 * handlers at a gate, and scripts failures.
 */
@Component
public class Probe {

    private final ConcurrentHashMap<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    private volatile CountDownLatch gate = new CountDownLatch(0);
    private final AtomicInteger entered = new AtomicInteger();
    public final AtomicInteger failuresLeft = new AtomicInteger();

    public int ran(String route) {
        return runs.computeIfAbsent(route, r -> new AtomicInteger()).incrementAndGet();
    }

    public int runs(String route) {
        AtomicInteger n = runs.get(route);
        return n == null ? 0 : n.get();
    }

    /** Handlers that pass the gate block until {@link #open()}. */
    public void close() {
        gate = new CountDownLatch(1);
        entered.set(0);
    }

    public void open() {
        gate.countDown();
    }

    public int entered() {
        return entered.get();
    }

    public void passGate() throws InterruptedException {
        entered.incrementAndGet();
        if (!gate.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("gate never opened");
        }
    }

    public void reset() {
        runs.clear();
        failuresLeft.set(0);
        open();
    }
}
