package dev.once.autoconfigure;

import dev.once.retention.RetentionListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Micrometer metrics of the retention sweep, tagged {@code table}: {@code once.retention.swept} (rows deleted by
 * this instance), {@code once.retention.overdue} (seconds the oldest due row has waited past its due time, as the
 * last round measured) and {@code once.retention.failures}.
 */
final class RetentionMetrics implements RetentionListener {

    private final MeterRegistry registry;
    private final Map<String, AtomicLong> overdueMillis = new ConcurrentHashMap<>();

    RetentionMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void swept(String table, int rows) {
        Counter.builder("once.retention.swept").description("Rows deleted by the retention sweep").tag("table", table)
                .register(registry).increment(rows);
    }

    @Override
    public void overdue(String table, Duration age) {
        overdueMillis.computeIfAbsent(table, t -> {
            AtomicLong millis = new AtomicLong();
            Gauge.builder("once.retention.overdue", millis, m -> m.get() / 1000.0).baseUnit("seconds")
                    .description("How long the oldest row due for deletion has waited").tag("table", t).register(registry);
            return millis;
        }).set(age.toMillis());
    }

    @Override
    public void failed(String table, Exception failure) {
        Counter.builder("once.retention.failures").description("Failed retention rounds").tag("table", table)
                .register(registry).increment();
    }
}
