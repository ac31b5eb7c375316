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
 * (records refused for their signature), {@code once.dispatcher.unhandled} tagged by {@code type}, {@code reason} and
 * {@code action}, {@code once.dispatcher.parked} by {@code reason} and {@code once.dispatcher.unparked} by
 * {@code outcome}. Consumer lag comes from the Kafka consumers' own metrics.
 */
final class DispatchMetrics implements DispatchListener {

    private final MeterRegistry registry;

    DispatchMetrics(MeterRegistry registry) {
        this.registry = registry;
        // registered at 0 from the start, so that alert rules on their growth see a series before the first event
        Counter.builder("once.dispatcher.dead.lettered").register(registry);
        for (String reason : java.util.List.of("failing", "held", "behind")) {
            Counter.builder("once.dispatcher.parked").description("Events parked in PostgreSQL with their key")
                    .tag("reason", reason).register(registry);
        }
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

    @Override
    public void unhandled(String eventType, String reason, String action) {
        Counter.builder("once.dispatcher.unhandled").description("Events no handler takes, skipped or held")
                .tag("type", eventType).tag("reason", reason).tag("action", action).register(registry).increment();
    }

    @Override
    public void parked(String reason) {
        Counter.builder("once.dispatcher.parked").description("Events parked in PostgreSQL with their key")
                .tag("reason", reason).register(registry).increment();
    }

    @Override
    public void unparked(String outcome) {
        Counter.builder("once.dispatcher.unparked").description("Parked events that left their key's head")
                .tag("outcome", outcome).register(registry).increment();
    }
}
