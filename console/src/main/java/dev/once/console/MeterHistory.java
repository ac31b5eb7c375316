package dev.once.console;

import dev.once.spi.Rounds;
import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The console's charts: a few of Once's meters read from the application's own {@link MeterRegistry} every interval
 * and kept for the last {@code samples} readings, so that no Prometheus is needed to see a trend. Gauges are kept as
 * read; counters as their rate per second since the reading before. A meter the application does not register (no
 * relay in this service, say) reads as {@code null}, and every one does in an application without a registry.
 * Thread-safe.
 */
final class MeterHistory implements AutoCloseable {

    /** One charted figure: its name in the JSON, the meter it comes from, and whether it is a counter's rate. */
    public record Series(String name, String meter, boolean rate) {
    }

    /** What the console charts: the backlog, the lag, and the handlers' flow. */
    public static final List<Series> SERIES = List.of(
            new Series("outbox_pending", "once.outbox.pending", false),
            new Series("outbox_parked_rows", "once.outbox.parked.rows", false),
            new Series("oldest_pending_age_seconds", "once.outbox.oldest.pending.age", false),
            new Series("slot_lag_bytes", "once.outbox.slot.lag", false),
            new Series("handler_lag_records", "kafka.consumer.fetch.manager.records.lag.max", false),
            new Series("handled_per_second", "once.dispatcher.handled", true),
            new Series("parked_per_second", "once.dispatcher.parked", true),
            new Series("dead_lettered_per_second", "once.dispatcher.dead.lettered", true));

    private record Sample(long epochSecond, Double[] values) {
    }

    private final MeterRegistry registry;
    private final int samples;
    private final Deque<Sample> history = new ArrayDeque<>();
    private final Rounds rounds;
    private double[] lastTotals;
    private long lastNanos;

    /** Readings of {@code registry} ({@code null}: none) every {@code interval}, the last {@code samples} kept. */
    public MeterHistory(MeterRegistry registry, Duration interval, int samples) {
        this.registry = registry;
        this.samples = samples;
        this.rounds = new Rounds("once-console-meters", interval, this::sample);
    }

    public void start() {
        rounds.start();
    }

    @Override
    public void close() {
        rounds.close();
    }

    /** Reads every series now. */
    synchronized void sample() {
        long now = System.nanoTime();
        double[] totals = new double[SERIES.size()];
        Double[] values = new Double[SERIES.size()];
        for (int i = 0; i < SERIES.size(); i++) {
            Series series = SERIES.get(i);
            Double value = read(series.meter());
            totals[i] = value == null ? Double.NaN : value;
            if (!series.rate()) {
                values[i] = value;
            } else if (lastTotals != null && value != null) {
                // a counter registers at its first increment: before that, it had counted nothing
                double before = Double.isNaN(lastTotals[i]) ? 0 : lastTotals[i];
                values[i] = Math.max(0, value - before) / ((now - lastNanos) / 1e9);
            }
        }
        lastTotals = totals;
        lastNanos = now;
        history.addLast(new Sample(System.currentTimeMillis() / 1000, values));
        while (history.size() > samples) {
            history.removeFirst();
        }
    }

    /** The history as uPlot reads it: {@code t} (epoch seconds) and one array per series, oldest first. */
    public synchronized Map<String, Object> series() {
        Map<String, Object> out = new LinkedHashMap<>();
        List<Long> t = new ArrayList<>();
        history.forEach(s -> t.add(s.epochSecond()));
        out.put("t", t);
        for (int i = 0; i < SERIES.size(); i++) {
            List<Double> values = new ArrayList<>();
            int index = i;
            history.forEach(s -> values.add(s.values()[index]));
            out.put(SERIES.get(i).name(), values);
        }
        return out;
    }

    /** The sum over every meter of that name (all tags), or {@code null} when none is registered. */
    private Double read(String name) {
        if (registry == null) {
            return null;
        }
        List<Meter> meters = List.copyOf(registry.find(name).meters());
        if (meters.isEmpty()) {
            return null;
        }
        double sum = 0;
        boolean any = false;
        for (Meter meter : meters) {
            for (Measurement m : meter.measure()) {
                if (!Double.isNaN(m.getValue())) {
                    sum += m.getValue();
                    any = true;
                }
                break;
            }
        }
        return any ? sum : null;
    }
}
