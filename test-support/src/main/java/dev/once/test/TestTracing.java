package dev.once.test;

import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.OtelBaggageManager;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelPropagator;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.micrometer.tracing.propagation.Propagator;
import io.opentelemetry.api.baggage.propagation.W3CBaggagePropagator;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.util.List;

/**
 * A real tracer, wired as Spring Boot wires Micrometer Tracing over the OpenTelemetry SDK: W3C trace context and
 * baggage ({@code remoteFields} propagated), the three tracing observation handlers, every trace sampled. Spans are
 * kept in memory ({@link #inMemory}, for tests) or discarded by a batch processor ({@link #discarding}, the
 * benchmarks' "tracing on"). Close it to stop the span processor.
 */
public final class TestTracing implements AutoCloseable {

    private final SdkTracerProvider provider;
    private final InMemorySpanExporter spans;
    private final OtelTracer tracer;
    private final OtelPropagator propagator;
    private final ObservationRegistry observations;

    private TestTracing(SpanProcessor processor, InMemorySpanExporter spans, List<String> remoteFields) {
        this.provider = SdkTracerProvider.builder().setSampler(Sampler.alwaysOn()).addSpanProcessor(processor).build();
        this.spans = spans;
        io.opentelemetry.api.trace.Tracer otel = provider.get("once-test");
        OtelCurrentTraceContext current = new OtelCurrentTraceContext();
        this.tracer = new OtelTracer(otel, current, event -> { }, new OtelBaggageManager(current, remoteFields, List.of()));
        this.propagator = new OtelPropagator(ContextPropagators.create(TextMapPropagator.composite(
                W3CTraceContextPropagator.getInstance(), W3CBaggagePropagator.getInstance())), otel);
        this.observations = ObservationRegistry.create();
        observations.observationConfig().observationHandler(new ObservationHandler.FirstMatchingCompositeObservationHandler(
                new PropagatingSenderTracingObservationHandler<>(tracer, propagator),
                new PropagatingReceiverTracingObservationHandler<>(tracer, propagator),
                new DefaultTracingObservationHandler(tracer)));
    }

    /** Finished spans kept in memory ({@link #spans()}), exported as each ends; baggage {@code remoteFields} travel. */
    public static TestTracing inMemory(String... remoteFields) {
        InMemorySpanExporter spans = InMemorySpanExporter.create();
        return new TestTracing(SimpleSpanProcessor.create(spans), spans, List.of(remoteFields));
    }

    /** Spans recorded and batched as in production, then discarded: the cost of tracing without an exporter's. */
    public static TestTracing discarding() {
        return new TestTracing(BatchSpanProcessor.builder(SpanExporter.composite()).build(), null, List.of());
    }

    public Tracer tracer() {
        return tracer;
    }

    public Propagator propagator() {
        return propagator;
    }

    /** An observation registry whose observations are spans of this tracer. */
    public ObservationRegistry observations() {
        return observations;
    }

    /** The spans finished so far ({@link #inMemory} only). */
    public List<SpanData> spans() {
        if (spans == null) {
            throw new IllegalStateException("a discarding tracer keeps no spans");
        }
        return spans.getFinishedSpanItems();
    }

    @Override
    public void close() {
        provider.close();
    }
}
