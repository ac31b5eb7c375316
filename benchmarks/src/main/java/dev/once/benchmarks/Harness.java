package dev.once.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * A minimal closed-loop throughput harness: N threads run an operation back to back for a fixed time. Candidates and
 * baselines are measured in alternating rounds and summarised by their median, so drift on a noisy machine hits both.
 */
public final class Harness {

    /**
     * One unit of work; {@code thread} and {@code seq} make per-call values (fresh keys) without shared state.
     * {@code seq} is unique per thread across every measurement of the run.
     */
    @FunctionalInterface
    public interface Operation {
        void run(int thread, long seq) throws Exception;
    }

    private static final java.util.concurrent.atomic.AtomicLong MEASUREMENTS = new java.util.concurrent.atomic.AtomicLong();

    private Harness() {
    }

    /** Operations per second of {@code op} on {@code threads} threads over {@code millis}. */
    public static double measure(Operation op, int threads, long millis) throws InterruptedException {
        AtomicBoolean running = new AtomicBoolean(true);
        LongAdder done = new LongAdder();
        CountDownLatch start = new CountDownLatch(1);
        long firstSeq = MEASUREMENTS.incrementAndGet() << 40;
        List<Thread> workers = new ArrayList<>();
        List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            Thread worker = new Thread(() -> {
                try {
                    start.await();
                    long seq = firstSeq;
                    while (running.get()) {
                        op.run(thread, seq++);
                        done.increment();
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "bench-" + t);
            worker.start();
            workers.add(worker);
        }
        long begin = System.nanoTime();
        start.countDown();
        Thread.sleep(millis); // the measurement window itself, not a wait for a condition
        running.set(false);
        for (Thread worker : workers) {
            worker.join();
        }
        double seconds = (System.nanoTime() - begin) / 1e9;
        if (!errors.isEmpty()) {
            throw new IllegalStateException("benchmark operation failed", errors.get(0));
        }
        return done.sum() / seconds;
    }

    /**
     * Measures every operation in {@code order} in alternating rounds after a warm-up of one round's length each, and
     * returns the median operations per second of each, in that order.
     */
    public static java.util.Map<String, Double> compare(java.util.Map<String, Operation> operations, List<String> order,
                                                        int threads, long millis, int rounds) throws InterruptedException {
        return compare(operations, order, threads, millis, rounds, Math.max(1_000, millis));
    }

    /** {@link #compare(java.util.Map, List, int, long, int)} after a warm-up of {@code warmupMillis} each. */
    public static java.util.Map<String, Double> compare(java.util.Map<String, Operation> operations, List<String> order,
                                                        int threads, long millis, int rounds, long warmupMillis)
            throws InterruptedException {
        java.util.Map<String, List<Double>> runs = new java.util.LinkedHashMap<>();
        for (String name : order) {
            // the first rounds after a 1 s warm-up still climbed by half (JIT, caches), hence a round's length or more
            measure(operations.get(name), threads, warmupMillis);
            runs.put(name, new ArrayList<>());
        }
        for (int r = 0; r < rounds; r++) {
            for (String name : order) {
                runs.get(name).add(measure(operations.get(name), threads, millis));
            }
        }
        java.util.Map<String, Double> medians = new java.util.LinkedHashMap<>();
        runs.forEach((name, values) -> {
            medians.put(name, median(values));
            // every round, so that the spread behind each median is on record
            System.out.printf(java.util.Locale.ROOT, "  rounds of %-36s %s%n", name + ":",
                    values.stream().map(v -> String.format(java.util.Locale.ROOT, "%.0f", v))
                            .collect(java.util.stream.Collectors.joining(" ")));
        });
        return medians;
    }

    public static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(Double::compare);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }
}
