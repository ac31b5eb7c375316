package dev.once.dispatch.autoconfigure;

import dev.once.dispatch.DispatchListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/**
 * Micrometer metrics of the dispatcher, tagged by {@code handler}: {@code once.dispatcher.handled},
 * {@code once.dispatcher.skipped} (duplicates), {@code once.dispatcher.failed}, the {@code once.dispatcher.handler}
 * latency timer, {@code once.dispatcher.dead.lettered}, and {@code once.dispatcher.rejected} tagged by {@code reason}
 * (records refused for their signature). Consumer lag comes from the Kafka consumers' own metrics.
 */
final class DispatchMetrics implements DispatchListener {

    private final MeterRegistry registry;

    DispatchMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void handled(String handlerKey, Duration elapsed) {
        Counter.builder("once.dispatcher.handled").tag("handler", handlerKey).register(registry).increment();
        Timer.builder("once.dispatcher.handler").tag("handler", handlerKey).register(registry).record(elapsed);
    }

    @Override
    public void skippedDuplicate(String handlerKey) {
        Counter.builder("once.dispatcher.skipped").tag("handler", handlerKey).register(registry).increment();
    }

    @Override
    public void failed(String handlerKey) {
        Counter.builder("once.dispatcher.failed").tag("handler", handlerKey).register(registry).increment();
    }

    @Override
    public void deadLettered(String reason) {
        Counter.builder("once.dispatcher.dead.lettered").register(registry).increment();
    }

    @Override
    public void rejected(String code) {
        Counter.builder("once.dispatcher.rejected").description("Records refused for their signature")
                .tag("reason", code).register(registry).increment();
    }
}
