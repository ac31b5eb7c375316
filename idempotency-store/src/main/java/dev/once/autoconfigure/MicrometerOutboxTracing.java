package dev.once.autoconfigure;

import dev.once.outbox.OutboxTracing;
import io.micrometer.tracing.TraceContext;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.propagation.Propagator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@link OutboxTracing} through Micrometer Tracing: the current span's context, written by the application's own
 * propagator (W3C trace context and baggage with Boot's defaults, B3 if it is configured so).
 */
final class MicrometerOutboxTracing implements OutboxTracing {

    private final Tracer tracer;
    private final Propagator propagator;

    MicrometerOutboxTracing(Tracer tracer, Propagator propagator) {
        this.tracer = tracer;
        this.propagator = propagator;
    }

    @Override
    public Map<String, String> currentHeaders() {
        TraceContext context = tracer.currentTraceContext().context();
        if (context == null) {
            return Map.of();
        }
        Map<String, String> headers = new LinkedHashMap<>(4);
        propagator.inject(context, headers, Map::put);
        return headers;
    }
}
