package dev.once.benchmarks.retention;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * One measurement window of a sweep benchmark: writers that run a request back to back (closed loop, at full speed),
 * a sweep that runs the real sweep call after call on a thread of its own, or both at once. Shared by
 * {@link RecordSweepBenchmark} and {@link OutboxSweepBenchmark}.
 */
final class LoadWindow {

    /** One request of a writer; {@code seq} is unique per thread within the window. */
    @FunctionalInterface
    interface Request {
        void run(int thread, long seq) throws Exception;
    }

    /** The real sweep, driven call after call for the window. */
    interface Sweep {

        /** One call of the real sweep on the caller's thread; the rows it deleted. */
        long sweepOnce();

        /** Makes a call under way return after the batch it is in (the sweep's own way of closing). */
        void stop();

        /** Rows deleted so far in this window, batches of a call under way included; -1 when it cannot tell. */
        long progress();
    }

    /** What a window measured; {@code latencies} sorted, in nanoseconds. */
    record Result(String kind, long requests, double requestsPerSecond, long[] latencies, long swept,
                  double sweptPerSecond, double firstHalf, double secondHalf, int dryCalls, double dryAfterSeconds) {

        double p(double q) {
            if (latencies.length == 0) {
                return Double.NaN;
            }
            int i = (int) Math.ceil(q * latencies.length) - 1;
            return latencies[Math.max(0, Math.min(latencies.length - 1, i))] / 1e6;
        }

        boolean writes() {
            return requests >= 0;
        }

        boolean sweeps() {
            return swept >= 0;
        }
    }

    private LoadWindow() {
    }

    /**
     * Runs {@code writers} threads of {@code request} (none when {@code request} is null) and {@code sweep} (none when
     * null) for {@code millis}. The sweep's rate counts the rows it deleted until its thread ended (the batch under
     * way at the end of the window included), over the time it ran; a call of the sweep that returns before the window
     * ends found nothing more due: a dry call.
     */
    static Result run(String kind, int writers, Request request, Sweep sweep, long millis) throws Exception {
        AtomicBoolean running = new AtomicBoolean(true);
        CountDownLatch start = new CountDownLatch(1);
        List<long[]> perThread = new CopyOnWriteArrayList<>();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        LongAdder done = new LongAdder();
        List<Thread> threads = new ArrayList<>();
        int n = request == null ? 0 : writers;
        for (int t = 0; t < n; t++) {
            int thread = t;
            Thread worker = new Thread(() -> {
                long[] samples = new long[1 << 14];
                int count = 0;
                try {
                    start.await();
                    long seq = 0;
                    while (running.get()) {
                        long t0 = System.nanoTime();
                        request.run(thread, seq++);
                        if (count == samples.length) {
                            samples = Arrays.copyOf(samples, count * 2);
                        }
                        samples[count++] = System.nanoTime() - t0;
                        done.increment();
                    }
                } catch (Throwable e) {
                    errors.add(e);
                    running.set(false);
                }
                perThread.add(Arrays.copyOf(samples, count));
            }, "writer-" + t);
            worker.start();
            threads.add(worker);
        }
        long[] sweptTotal = {0};
        int[] dry = {0};
        long[] sweepEnd = {0};
        long[] dryAt = {0};
        long[] sweptAtDry = {0};
        Thread sweeper = null;
        if (sweep != null) {
            sweeper = new Thread(() -> {
                try {
                    start.await();
                    while (running.get()) {
                        sweptTotal[0] += sweep.sweepOnce();
                        if (running.get()) { // the call returned on its own: nothing more was due
                            if (dry[0]++ == 0) {
                                dryAt[0] = System.nanoTime();
                                sweptAtDry[0] = sweptTotal[0];
                            }
                            Thread.sleep(100); // as a sweeper between rounds, rather than asking again at once
                        }
                    }
                } catch (Throwable e) {
                    errors.add(e);
                    running.set(false);
                }
                sweepEnd[0] = System.nanoTime();
            }, "sweep");
            sweeper.start();
        }
        long begin = System.nanoTime();
        start.countDown();
        Thread.sleep(millis / 2); // the measurement window itself
        long mid = sweep == null ? 0 : sweep.progress();
        long midAt = System.nanoTime();
        Thread.sleep(millis - millis / 2);
        long end = sweep == null ? 0 : sweep.progress();
        long endAt = System.nanoTime();
        running.set(false);
        if (sweep != null) {
            sweep.stop();
        }
        for (Thread t : threads) {
            t.join();
        }
        long writersEnd = System.nanoTime();
        if (sweeper != null) {
            sweeper.join();
        }
        if (!errors.isEmpty()) {
            throw new IllegalStateException("window '" + kind + "' failed", errors.get(0));
        }
        long[] all = perThread.stream().flatMapToLong(Arrays::stream).sorted().toArray();
        double writeSeconds = (writersEnd - begin) / 1e9;
        // a sweep that ran dry is rated up to then: the time after it found nothing to delete is not its pace
        double sweepSeconds = ((dry[0] > 0 ? dryAt[0] : sweepEnd[0]) - begin) / 1e9;
        long sweptRated = dry[0] > 0 ? sweptAtDry[0] : sweptTotal[0];
        boolean halves = sweep != null && mid >= 0 && end >= 0;
        return new Result(kind, request == null ? -1 : done.sum(), request == null ? Double.NaN : done.sum() / writeSeconds,
                all, sweep == null ? -1 : sweptTotal[0], sweep == null ? Double.NaN : sweptRated / sweepSeconds,
                halves ? mid / ((midAt - begin) / 1e9) : Double.NaN,
                halves ? (end - mid) / ((endAt - midAt) / 1e9) : Double.NaN, dry[0],
                dry[0] > 0 ? (dryAt[0] - begin) / 1e9 : Double.NaN);
    }

    /** One line per window: {@code <bench> window <i> <kind> ...}, greppable by benchmark, window and kind. */
    static String line(String bench, String unit, int index, Result r) {
        StringBuilder s = new StringBuilder(String.format(Locale.ROOT, "%s window %2d %-16s", bench, index, r.kind()));
        if (r.writes()) {
            s.append(String.format(Locale.ROOT, " %8.0f %s/s p50 %6.2f ms p99 %7.2f ms max %7.2f ms", r.requestsPerSecond(),
                    unit, r.p(0.50), r.p(0.99), r.p(1.0)));
        } else {
            s.append(String.format(Locale.ROOT, " %8s %s/s %46s", "-", unit, ""));
        }
        if (r.sweeps()) {
            s.append(String.format(Locale.ROOT, " | swept %8.0f rows/s (%,d rows", r.sweptPerSecond(), r.swept()));
            if (!Double.isNaN(r.firstHalf())) {
                s.append(String.format(Locale.ROOT, "; halves %.0f / %.0f", r.firstHalf(), r.secondHalf()));
            }
            s.append(')');
            if (r.dryCalls() > 0) {
                s.append(String.format(Locale.ROOT, " RAN DRY after %.1f s (rated up to then%s)", r.dryAfterSeconds(),
                        r.writes() ? "; the writers overlapped it only that long" : ""));
            }
        }
        return s.toString();
    }

    static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(Double::compare);
        int n = sorted.size();
        return n == 0 ? Double.NaN : n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    /** The ABBA order of {@code kinds} over {@code rounds}: forward in even rounds, backward in odd ones. */
    static <T> List<T> abba(List<T> kinds, int rounds) {
        List<T> order = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            List<T> round = new ArrayList<>(kinds);
            if (r % 2 == 1) {
                java.util.Collections.reverse(round);
            }
            order.addAll(round);
        }
        return order;
    }
}
