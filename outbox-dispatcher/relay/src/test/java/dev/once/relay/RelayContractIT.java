package dev.once.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.idempotency.OnceMigrations;
import dev.once.outbox.OutboxEvent;
import dev.once.outbox.OutboxWriter;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.wire.RecordSigning;
import dev.once.wire.SigningKeys;
import dev.once.wire.WireFormat;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The contract every relay keeps, on a real PostgreSQL and a real Kafka broker: everything committed arrives, byte for
 * byte and in order within each aggregate; a restart loses nothing; rows leave the outbox once published, or are kept
 * and marked for a retention period. The polling relay, the CDC relay and Kafka Connect each run it; the relays that
 * run in the application also keep {@link EmbeddedRelayContractIT}.
 */
public abstract class RelayContractIT {

    @RegisterExtension
    protected static final TestDatabase db = TestDatabase.create().poolSize(12);

    protected static final JsonMapper JSON = JsonMapper.builder().build();
    protected static final int AGGREGATES = 50;

    protected JdbcTemplate jdbc;
    protected String prefix;
    protected final List<OutboxRelay> relays = new ArrayList<>();

    /** Every relay of the contract signs: each record it publishes must verify where it is consumed. */
    protected static final String SIGNING_KEY_ID = "contract-1";
    protected static final String SIGNING_SECRET = "a contract key of at least thirty-two bytes";
    protected static final RecordSigning SIGNING = RecordSigning.require(
            SigningKeys.of(Map.of(SIGNING_KEY_ID, SIGNING_SECRET), null));

    /** A relay of the kind under test over this class's schema, publishing with {@code transport}. */
    protected abstract OutboxRelay newRelay(String name, EventTransport transport, RelayOptions options);

    @BeforeAll
    protected static void migrate() {
        OnceMigrations.migrate(db.dataSource());
    }

    @BeforeEach
    protected void setUp() {
        jdbc = new JdbcTemplate(db.dataSource());
        jdbc.update("DELETE FROM outbox_event");
        prefix = "t" + UUID.randomUUID().toString().substring(0, 8);
        createTopic(prefix + ".order", 4);
        createTopic(prefix + ".big", 1);
    }

    @AfterEach
    protected void stopRelays() {
        relays.forEach(OutboxRelay::close);
        relays.clear();
    }

    /** The Kafka cluster the relay under test publishes to. */
    protected String bootstrapServers() {
        return TestKafka.bootstrapServers();
    }

    protected void createTopic(String topic, int partitions) {
        TestKafka.createTopic(topic, partitions);
    }

    protected OutboxRelay started(String name, Map<String, Object> producer, RelayOptions options) {
        Map<String, Object> config = new HashMap<>(producer);
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        OutboxRelay relay = newRelay(name, new KafkaTransport(config, TopicRouter.byAggregateType(prefix),
                Duration.ofSeconds(10), SIGNING), options);
        relays.add(relay);
        relay.start();
        return relay;
    }

    protected OutboxRelay started(String name) {
        return started(name, Map.of(), RelayOptions.ofDefaults());
    }

    /** Commits {@code count} events over {@link #AGGREGATES} aggregates in one statement; seq follows n. */
    protected void commitEvents(int from, int count) {
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type,
                                          event_version, payload, headers)
                SELECT gen_random_uuid(), 'acme', 'alice', 'order', 'o-' || (n % ?), 'OrderPlaced', 1,
                       convert_to(jsonb_build_object('n', n, 'aggregate', 'o-' || (n % ?))::text, 'UTF8'),
                       jsonb_build_object('traceparent', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01')
                FROM generate_series(?, ?) AS n
                ORDER BY n
                """, AGGREGATES, AGGREGATES, from, from + count - 1);
    }

    @Test
    void the_value_on_kafka_is_the_appended_payload_byte_for_byte_with_its_media_type() {
        createTopic(prefix + ".exact", 1);
        String json = "{ \"b\" : 1,\n  \"a\":[ 1.0 ,2e0 ], \"a\": \"the same member twice\" }\t";
        byte[] text = "h\u00e9llo \u2713 \ud83d\ude00".getBytes(StandardCharsets.UTF_8);
        byte[] binary = {0x0a, 0x00, 0x01, (byte) 0xff, 0x00, (byte) 0x80, 0x7f, 0x00};
        OutboxWriter writer = OutboxWriter.create(db.dataSource());
        new TransactionTemplate(new DataSourceTransactionManager(db.dataSource())).executeWithoutResult(tx -> {
            writer.append(exact("x-1").payloadJson(json).build());
            writer.append(exact("x-2").payload(text, "text/plain; charset=utf-8").build());
            writer.append(exact("x-3").payload(binary, "application/x-protobuf").build());
        });
        started("exact");

        Received received = consumeUntil(prefix + ".exact", 3);

        Map<String, ConsumerRecord<String, byte[]>> byKey = new HashMap<>();
        received.records().forEach(r -> byKey.put(r.key(), r));
        assertThat(byKey.get("x-1").value()).isEqualTo(json.getBytes(StandardCharsets.UTF_8));
        assertThat(header(byKey.get("x-1"), WireFormat.CONTENT_TYPE)).isEqualTo("application/json");
        assertThat(byKey.get("x-2").value()).isEqualTo(text);
        assertThat(header(byKey.get("x-2"), WireFormat.CONTENT_TYPE)).isEqualTo("text/plain; charset=utf-8");
        assertThat(byKey.get("x-3").value()).isEqualTo(binary);
        assertThat(header(byKey.get("x-3"), WireFormat.CONTENT_TYPE)).isEqualTo("application/x-protobuf");
        assertThat(received.unverified()).as("records whose signature does not verify").isZero();
    }

    private static OutboxEvent.Builder exact(String aggregateId) {
        return OutboxEvent.builder().tenantId("acme").actorId("alice").aggregate("exact", aggregateId)
                .type("Exact", 1);
    }

    @Test
    void ten_thousand_events_over_fifty_aggregates_all_arrive_in_order_per_aggregate() {
        commitEvents(1, 10_000);
        started("a");

        Received received = consumeUntil(prefix + ".order", 10_000);

        assertThat(received.distinctEvents()).isEqualTo(10_000);
        assertThat(received.duplicates()).isZero();
        assertThat(received.outOfOrder()).isZero();
        await().atMost(Duration.ofSeconds(60)).until(() -> pending() == 0); // at once, or once the slot confirmed them
        ConsumerRecord<String, byte[]> any = received.records().get(0);
        assertThat(header(any, WireFormat.TENANT_ID)).isEqualTo("acme");
        assertThat(header(any, WireFormat.ACTOR_ID)).isEqualTo("alice");
        assertThat(header(any, WireFormat.EVENT_TYPE)).isEqualTo("OrderPlaced");
        assertThat(header(any, WireFormat.EVENT_VERSION)).isEqualTo("1");
        assertThat(header(any, "traceparent")).startsWith("00-0af76519");
        assertThat(header(any, WireFormat.CONTENT_TYPE)).isEqualTo("application/json");
        assertThat(any.key()).isEqualTo(JSON.readTree(any.value()).get("aggregate").asString());
        assertThat(header(any, WireFormat.AGGREGATE_TYPE)).isEqualTo("order");
        assertThat(header(any, WireFormat.SIGNATURE_KEY)).isEqualTo(SIGNING_KEY_ID);
        assertThat(header(any, WireFormat.FORMAT)).isEqualTo(WireFormat.FORMAT_VERSION);
        assertThat(received.unverified()).as("records whose signature does not verify").isZero();
    }

    @Test
    void a_relay_stopped_mid_stream_and_restarted_loses_nothing() {
        commitEvents(1, 6_000);
        OutboxRelay first = started("first", Map.of(), RelayOptions.ofDefaults().withBatchSize(100));
        await().atMost(Duration.ofSeconds(60)).until(() -> pending() < 5_000);
        first.close();
        commitEvents(6_001, 2_000);

        started("second");
        Received received = consumeUntil(prefix + ".order", 8_000);

        assertThat(received.distinctEvents()).isEqualTo(8_000);
        System.out.printf("restart mid-stream: %d records for 8000 events, %d duplicates%n", received.records().size(),
                received.duplicates());
        assertThat(received.outOfOrder()).isZero();
    }

    @Test
    void with_a_retention_period_published_rows_are_kept_and_marked() {
        commitEvents(1, 300);
        started("a", Map.of(), RelayOptions.ofDefaults().withRetention(Duration.ofHours(1)));

        consumeUntil(prefix + ".order", 300);

        await().atMost(Duration.ofSeconds(30)).until(() -> pending() == 0);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE published_at IS NOT NULL", Long.class))
                .isEqualTo(300);
    }

    protected long pending() {
        return jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE published_at IS NULL AND parked_at IS NULL",
                Long.class);
    }

    protected static String header(ConsumerRecord<String, byte[]> record, String name) {
        var header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    /** What a consumer saw on one topic. */
    protected record Received(List<ConsumerRecord<String, byte[]>> records) {

        /** Records whose signature does not verify against the topic, key, headers and payload they arrived with. */
        public long unverified() {
            return records.stream().filter(r -> SIGNING.verify(r) != RecordSigning.Verdict.VALID).count();
        }

        public long distinctEvents() {
            return records.stream().map(r -> header(r, WireFormat.EVENT_ID)).distinct().count();
        }

        /** Events delivered more than once: distinct (partition, offset) positions beyond one per event. */
        public long duplicates() {
            long positions = records.stream().map(r -> r.partition() + "@" + r.offset()).distinct().count();
            return positions - distinctEvents();
        }

        /** First deliveries of an aggregate's events that arrive after a later event of that aggregate. */
        public long outOfOrder() {
            Map<String, Long> last = new HashMap<>();
            Set<String> seen = new HashSet<>();
            long late = 0;
            for (ConsumerRecord<String, byte[]> r : records) {
                if (!seen.add(header(r, WireFormat.EVENT_ID))) {
                    continue; // a redelivery, counted as a duplicate
                }
                JsonNode value = JSON.readTree(r.value());
                long n = value.get("n").asLong();
                Long previous = last.put(r.key(), n);
                if (previous != null && previous > n) {
                    late++;
                    last.put(r.key(), previous);
                }
            }
            return late;
        }
    }

    protected Received consumeUntil(String topic, int distinct) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "verify-" + UUID.randomUUID());
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000);
        List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(config, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            await().atMost(Duration.ofSeconds(120)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10))
                    .until(() -> {
                        for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                            records.add(r);
                            ids.add(header(r, WireFormat.EVENT_ID));
                        }
                        return ids.size() >= distinct;
                    });
            // keep reading briefly for redeliveries that follow the last new event, so duplicates are counted
            for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                records.add(r);
            }
        }
        return new Received(records);
    }
}
