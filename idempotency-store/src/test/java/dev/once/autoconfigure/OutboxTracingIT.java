package dev.once.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.outbox.OutboxEvent;
import dev.once.outbox.OutboxTracing;
import dev.once.outbox.OutboxWriter;
import dev.once.test.TestDatabase;
import dev.once.test.TestTracing;
import io.micrometer.tracing.BaggageInScope;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.propagation.Propagator;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * An event carries the trace context current at its append: with the application's tracer (Micrometer Tracing, as
 * Boot defines it), {@link OutboxWriter} writes the span's {@code traceparent} and the propagated baggage into the
 * row's headers; without a span, or without Micrometer Tracing at all, the event is appended as it was given.
 */
class OutboxTracingIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create();

    static final JsonMapper JSON = JsonMapper.builder().build();
    static TestTracing tracing;
    static JdbcTemplate jdbc;

    @BeforeAll
    static void migrate() {
        dev.once.idempotency.OnceMigrations.migrate(db.dataSource());
        tracing = TestTracing.inMemory("tenant-region");
        jdbc = new JdbcTemplate(db.dataSource());
    }

    @AfterAll
    static void close() {
        tracing.close();
    }

    private ApplicationContextRunner runner() {
        DataSource shared = new DelegatingDataSource(db.dataSource());
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(OnceStoreAutoConfiguration.class))
                .withPropertyValues("once.idempotency.migrate=false")
                .withBean(DataSource.class, () -> shared);
    }

    private ApplicationContextRunner traced() {
        return runner().withBean(Tracer.class, tracing::tracer).withBean(Propagator.class, tracing::propagator);
    }

    @Test
    void an_event_appended_inside_a_span_carries_that_spans_traceparent_and_the_propagated_baggage() {
        traced().run(context -> {
            Span span = tracing.tracer().nextSpan().name("request").start();
            UUID id;
            try (Tracer.SpanInScope scope = tracing.tracer().withSpan(span);
                 BaggageInScope region = tracing.tracer().createBaggageInScope("tenant-region", "eu-west")) {
                id = append(context, event -> event);
            } finally {
                span.end();
            }

            Map<String, String> headers = headersOf(id);
            assertThat(headers).containsEntry("traceparent",
                    "00-" + span.context().traceId() + "-" + span.context().spanId() + "-01");
            assertThat(headers.get("baggage")).contains("tenant-region=eu-west");
        });
    }

    @Test
    void an_event_appended_outside_any_span_carries_no_trace_headers() {
        traced().run(context -> {
            UUID id = append(context, event -> event);

            assertThat(headersOf(id)).doesNotContainKeys("traceparent", "tracestate", "baggage");
        });
    }

    @Test
    void a_traceparent_the_application_set_itself_is_kept() {
        String own = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        traced().run(context -> {
            Span span = tracing.tracer().nextSpan().name("request").start();
            UUID id;
            try (Tracer.SpanInScope scope = tracing.tracer().withSpan(span)) {
                id = append(context, event -> event.withHeaders(Map.of("traceparent", own, "x-request", "r-1")));
            } finally {
                span.end();
            }

            assertThat(headersOf(id)).containsEntry("traceparent", own).containsEntry("x-request", "r-1");
        });
    }

    @Test
    void without_micrometer_tracing_on_the_classpath_the_writer_appends_events_as_they_are() {
        runner().withClassLoader(new FilteredClassLoader("io.micrometer.tracing")).run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(OutboxTracing.class);
            UUID id = append(context, event -> event);

            assertThat(headersOf(id)).isEmpty();
        });
    }

    /** Appends in a transaction on the context's DataSource, as the application's transaction manager runs it. */
    private static UUID append(ApplicationContext context,
                               Function<OutboxEvent, OutboxEvent> adjust) {
        OutboxWriter writer = context.getBean(OutboxWriter.class);
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(context.getBean(DataSource.class)));
        OutboxEvent event = OutboxEvent.builder().tenantId("acme").actorId("alice").aggregate("account", "a-1")
                .type("AccountCreated", 1).payloadJson("{\"id\":\"a-1\"}").build();
        return tx.execute(s -> writer.append(adjust.apply(event)));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, String> headersOf(UUID id) {
        return JSON.readValue(jdbc.queryForObject("SELECT headers::text FROM outbox_event WHERE id = ?", String.class, id),
                Map.class);
    }
}
