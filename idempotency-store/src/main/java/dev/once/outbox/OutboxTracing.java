package dev.once.outbox;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Carries the trace context current at append with the event: its headers gain what the tracer's propagator writes
 * (W3C {@code traceparent}, {@code tracestate}, and {@code baggage} as configured), which every relay copies into the
 * Kafka record unchanged and Once's dispatcher restores, so that each handler's span has the producing request's span
 * as its parent. A header the application set itself is kept. Spring Boot applications with Micrometer Tracing get
 * one from the store's autoconfiguration; without a tracer, {@link #NONE}.
 */
@FunctionalInterface
public interface OutboxTracing {

    /** No tracer: events are appended as they are, at no cost. */
    OutboxTracing NONE = Map::of;

    /** The headers that carry the current trace context, empty when there is none. */
    Map<String, String> currentHeaders();

    /** {@code event} with the current trace context's headers; those it already has win. */
    default OutboxEvent capture(OutboxEvent event) {
        Map<String, String> current = currentHeaders();
        if (current.isEmpty() || event.headers().keySet().containsAll(current.keySet())) {
            return event;
        }
        Map<String, String> headers = new LinkedHashMap<>(current);
        headers.putAll(event.headers());
        return event.withHeaders(headers);
    }
}
