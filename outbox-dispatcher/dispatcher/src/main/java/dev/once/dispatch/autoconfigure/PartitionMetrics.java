package dev.once.dispatch.autoconfigure;

import dev.once.idempotency.ClaimPartitions;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Micrometer metrics of the claims' partitions: {@code once.claims.partitions.created} (tagged {@code trigger}:
 * {@code ahead} by a round, {@code on_demand} for a claim that found its day missing, which means the rounds are
 * behind), {@code once.claims.partitions.dropped}, {@code once.claims.partitions.failures},
 * {@code once.claims.partitions.days.ahead} (days after today with a partition; below 1, creation fell behind) and
 * {@code once.claims.partitions.overdue} (seconds the oldest day due to be dropped has waited).
 */
final class PartitionMetrics implements ClaimPartitions.Listener {

    private final MeterRegistry registry;
    private final AtomicLong daysAhead = new AtomicLong(-1);
    private final AtomicLong overdueMillis = new AtomicLong();

    PartitionMetrics(MeterRegistry registry) {
        this.registry = registry;
        Gauge.builder("once.claims.partitions.days.ahead", daysAhead, AtomicLong::get)
                .description("Days after today whose claim partition exists").register(registry);
        Gauge.builder("once.claims.partitions.overdue", overdueMillis, m -> m.get() / 1000.0).baseUnit("seconds")
                .description("How long the oldest claim partition due to be dropped has waited").register(registry);
    }

    @Override
    public void created(int day, boolean onDemand) {
        Counter.builder("once.claims.partitions.created").description("Claim partitions created")
                .tag("trigger", onDemand ? "on_demand" : "ahead").register(registry).increment();
    }

    @Override
    public void dropped(int day) {
        Counter.builder("once.claims.partitions.dropped").description("Claim partitions dropped").register(registry)
                .increment();
    }

    @Override
    public void measured(int ahead, Duration overdue) {
        daysAhead.set(ahead);
        overdueMillis.set(overdue.toMillis());
    }

    @Override
    public void failed(Exception e) {
        Counter.builder("once.claims.partitions.failures").description("Failed partition rounds").register(registry)
                .increment();
    }
}
