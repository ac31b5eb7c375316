package dev.once.relay.autoconfigure;

import dev.once.outbox.OutboxOperations;
import dev.once.relay.RelayListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/**
 * Micrometer metrics of the relay: {@code once.outbox.published} (counter), {@code once.outbox.publish.latency}
 * (commit to Kafka acknowledgement), {@code once.outbox.parked.total}, {@code once.outbox.unavailable} and
 * {@code once.outbox.failures}, and gauges read from PostgreSQL on scrape: {@code once.outbox.pending},
 * {@code once.outbox.oldest.pending.age} (seconds) and {@code once.outbox.parked.rows}. (The CDC relay adds
 * {@code once.outbox.slot.lag}, in bytes.)
 */
final class RelayMetrics implements RelayListener {

    private final Counter published;
    private final Counter parked;
    private final Counter unavailable;
    private final Counter failures;
    private final Timer latency;

    RelayMetrics(MeterRegistry registry, OutboxOperations status) {
        this.published = Counter.builder("once.outbox.published").description("Events acknowledged by Kafka").register(registry);
        this.parked = Counter.builder("once.outbox.parked.total").description("Events parked").register(registry);
        this.unavailable = Counter.builder("once.outbox.unavailable").description("Batches retried because Kafka was unavailable").register(registry);
        this.failures = Counter.builder("once.outbox.failures").description("Relay failures").register(registry);
        this.latency = Timer.builder("once.outbox.publish.latency").description("Commit to Kafka acknowledgement")
                .publishPercentiles(0.5, 0.99).register(registry);
        Gauge.builder("once.outbox.pending", status, OutboxOperations::pending).description("Rows waiting to be published").register(registry);
        Gauge.builder("once.outbox.oldest.pending.age", status, s -> s.oldestPendingAge().toMillis() / 1000.0)
                .baseUnit("seconds").register(registry);
        Gauge.builder("once.outbox.parked.rows", status, OutboxOperations::parkedCount).register(registry);
    }

    @Override
    public void published(int count) {
        published.increment(count);
    }

    @Override
    public void latency(Duration elapsed) {
        latency.record(elapsed);
    }

    @Override
    public void parked(String reason) {
        parked.increment();
    }

    @Override
    public void unavailable(Throwable cause, Duration pause) {
        unavailable.increment();
    }

    @Override
    public void failed(Throwable failure) {
        failures.increment();
    }
}
