package dev.once.example;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.dispatch.EventDispatcher;
import dev.once.guard.IdempotencyMutationGuard;
import dev.once.relay.KafkaTransport;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.wire.WireFormat;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * One trace from the HTTP request to each handler, with Micrometer Tracing over OpenTelemetry as a Boot application
 * sets it up and spans kept in memory: the request's server span, the guard's, the relay's publish span and each
 * handler's, whichever relay publishes; a redelivery the handlers skip joins the same trace as spans of its own.
 */
class TracingIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    @TempDir
    static Path dataDir;

    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("outcome");
    static final AttributeKey<String> HANDLER = AttributeKey.stringKey("handler");
    static final AttributeKey<String> ROUTE = AttributeKey.stringKey("route");

    @ParameterizedTest(name = "relay {0}")
    @ValueSource(strings = {"polling", "cdc"})
    void a_guarded_post_is_one_trace_from_the_request_through_the_relay_to_each_handler_and_a_skipped_redelivery_joins_it(
            String relay) {
        InMemorySpanExporter spans = InMemorySpanExporter.create();
        try (ServiceInstances instances = new ServiceInstances(db, dataDir)) {
            ConfigurableApplicationContext service = instances.start(List.of(
                    "spring.kafka.bootstrap-servers=" + TestKafka.bootstrapServers(),
                    "once.outbox.relay.mode=" + relay,
                    "management.tracing.sampling.probability=1.0",
                    "management.opentelemetry.tracing.export.schedule-delay=100ms"), Map.of("spanExporter", spans));
            Http http = new Http(ServiceInstances.baseOf(service));

            HttpResponse<String> created = http.post("alice", "/accounts", "trace-" + UUID.randomUUID(),
                    "{\"name\":\"Barbara\",\"email\":\"barbara@example.com\"}");
            assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
            String accountId = ReferenceServiceIT.JSON.readTree(created.body()).path("id").asString();

            SpanData guard = await().atMost(Duration.ofSeconds(30)).until(
                    () -> find(spans, s -> s.getName().equals(IdempotencyMutationGuard.OBSERVATION)), Optional::isPresent)
                    .orElseThrow();
            String trace = guard.getTraceId();
            assertThat(guard.getAttributes().get(ROUTE)).isEqualTo("POST /accounts");
            assertThat(guard.getAttributes().get(OUTCOME)).isEqualTo("claimed");

            // the relay's publish span and both handlers' spans (one TRANSACTIONAL, one LEASED), children of the
            // guard's span: the context current when the account's domain event was appended
            await().atMost(Duration.ofSeconds(60)).until(() -> handlerSpans(spans, trace, "handled").size() == 2);
            List<SpanData> inTrace = inTrace(spans, trace);
            SpanData server = inTrace.stream().filter(s -> s.getKind() == SpanKind.SERVER).findFirst().orElseThrow();
            assertThat(server.getName()).isEqualTo("http post /accounts");
            assertThat(server.getParentSpanContext().isValid()).as("the request's span is the trace's root").isFalse();
            assertThat(ancestors(guard, inTrace)).contains(server.getSpanId());

            SpanData publish = inTrace.stream().filter(s -> s.getName().equals(KafkaTransport.OBSERVATION))
                    .findFirst().orElseThrow();
            assertThat(publish.getKind()).isEqualTo(SpanKind.PRODUCER);
            assertThat(publish.getParentSpanId()).isEqualTo(guard.getSpanId());
            assertThat(publish.getAttributes().get(OUTCOME)).isEqualTo("published");

            List<SpanData> handled = handlerSpans(spans, trace, "handled");
            assertThat(handled).extracting(s -> s.getAttributes().get(HANDLER))
                    .containsExactlyInAnyOrder("account-projection", "welcome-email");
            assertThat(handled).allSatisfy(s -> {
                assertThat(s.getKind()).isEqualTo(SpanKind.CONSUMER);
                assertThat(s.getParentSpanId()).isEqualTo(guard.getSpanId());
            });

            // the record carries the context the event was appended in, unchanged by the relay
            ConsumerRecord<byte[], byte[]> record = recordOf(instances.topicPrefix() + ".account", accountId);
            assertThat(header(record, WireFormat.TRACEPARENT)).isEqualTo("00-" + trace + "-" + guard.getSpanId() + "-01");

            // a redelivery (the same record again, as after a rebalance or a replay): each handler skips it, in a
            // span of its own, in the same trace; neither runs again
            redeliver(record);
            await().atMost(Duration.ofSeconds(60)).until(() -> handlerSpans(spans, trace, "skipped").size() == 2);
            assertThat(handlerSpans(spans, trace, "skipped")).extracting(s -> s.getAttributes().get(HANDLER))
                    .containsExactlyInAnyOrder("account-projection", "welcome-email");
            assertThat(handlerSpans(spans, trace, "skipped"))
                    .allSatisfy(s -> assertThat(s.getParentSpanId()).isEqualTo(guard.getSpanId()));
            assertThat(new JdbcTemplate(db.dataSource()).queryForObject(
                    "SELECT count(*) FROM outbound_email m JOIN outbox_event o ON o.id = m.event_id WHERE o.aggregate_id = ?",
                    Long.class, accountId)).isEqualTo(1);
            assertThat(handlerSpans(spans, trace, "handled")).hasSize(2);
        }
    }

    static Optional<SpanData> find(InMemorySpanExporter spans, java.util.function.Predicate<SpanData> test) {
        return spans.getFinishedSpanItems().stream().filter(test).findFirst();
    }

    static List<SpanData> inTrace(InMemorySpanExporter spans, String trace) {
        return spans.getFinishedSpanItems().stream().filter(s -> s.getTraceId().equals(trace)).toList();
    }

    static List<SpanData> handlerSpans(InMemorySpanExporter spans, String trace, String outcome) {
        return inTrace(spans, trace).stream().filter(s -> s.getName().equals(EventDispatcher.OBSERVATION))
                .filter(s -> outcome.equals(s.getAttributes().get(OUTCOME))).toList();
    }

    /** The span ids above {@code span}, nearest first. */
    static List<String> ancestors(SpanData span, List<SpanData> trace) {
        List<String> ancestors = new ArrayList<>();
        String parent = span.getParentSpanId();
        while (span.getParentSpanContext().isValid()) {
            String id = parent;
            ancestors.add(id);
            Optional<SpanData> up = trace.stream().filter(s -> s.getSpanId().equals(id)).findFirst();
            if (up.isEmpty()) {
                break;
            }
            span = up.get();
            parent = span.getParentSpanId();
        }
        return ancestors;
    }

    /** The first record on {@code topic} keyed {@code aggregateId}, as the relay published it. */
    static ConsumerRecord<byte[], byte[]> recordOf(String topic, String aggregateId) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "it-reader-" + UUID.randomUUID());
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<byte[], byte[]> consumer =
                     new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            List<ConsumerRecord<byte[], byte[]>> found = new ArrayList<>();
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                consumer.poll(Duration.ofMillis(200)).forEach(r -> {
                    if (aggregateId.equals(new String(r.key(), StandardCharsets.UTF_8))) {
                        found.add(r);
                    }
                });
                return !found.isEmpty();
            });
            return found.get(0);
        }
    }

    static void redeliver(ConsumerRecord<byte[], byte[]> record) {
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        try (KafkaProducer<byte[], byte[]> producer =
                     new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer())) {
            producer.send(new ProducerRecord<>(record.topic(), null, record.key(), record.value(), record.headers()));
        }
    }

    static String header(ConsumerRecord<?, ?> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }
}
