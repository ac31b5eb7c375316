package dev.once.guard.autoconfigure;

import dev.once.guard.GuardListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.beans.factory.ObjectProvider;

/**
 * Micrometer metrics of the guard: {@code once.idempotency.claims} counted by {@code outcome} (claimed, replayed,
 * in_progress, conflict, failed) and the {@code once.idempotency.guard} timer by outcome. Meters are created once per
 * outcome and cached.
 */
final class MicrometerGuardListener implements GuardListener {

    private final ObjectProvider<MeterRegistry> registries;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();
    /**
     * Looked up on first use and kept, also when there is none: {@code getIfAvailable} creates a defined registry on
     * demand, so its absence is final. A bean lookup per request cost 1-2 % of a guarded request's CPU.
     */
    private volatile Optional<MeterRegistry> registry;

    MicrometerGuardListener(ObjectProvider<MeterRegistry> registries) {
        this.registries = registries;
    }

    @Override
    public void onOutcome(String outcome) {
        MeterRegistry registry = registry();
        if (registry != null) {
            counters.computeIfAbsent(outcome, o -> Counter.builder("once.idempotency.claims")
                    .description("Idempotency claims by outcome").tag("outcome", o).register(registry)).increment();
        }
    }

    @Override
    public void onRun(String outcome, Duration elapsed) {
        MeterRegistry registry = registry();
        if (registry != null) {
            timers.computeIfAbsent(outcome, o -> Timer.builder("once.idempotency.guard")
                    .description("Time spent in IdempotencyMutationGuard.run").tag("outcome", o).register(registry))
                    .record(elapsed);
        }
    }

    private MeterRegistry registry() {
        Optional<MeterRegistry> current = registry;
        if (current == null) {
            current = Optional.ofNullable(registries.getIfAvailable());
            registry = current;
        }
        return current.orElse(null);
    }
}
