package dev.once.dispatch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.HandlerClaimStore;
import dev.once.idempotency.OnceMigrations;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.wire.RecordSigning;
import dev.once.wire.WireFormat;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/** Handlers take effect once per event on a real broker and a real PostgreSQL, whatever Kafka redelivers. */
class KafkaEventDispatcherIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(8);

    static JdbcTemplate jdbc;
    static HandlerClaimStore store;
    static KafkaProducer<String, byte[]> producer;

    String topic;
    KafkaEventDispatcher dispatcher;
    final Map<String, AtomicInteger> failuresLeft = new ConcurrentHashMap<>();

    @BeforeAll
    static void setUpAll() {
        OnceMigrations.migrate(db.dataSource());
        jdbc = new JdbcTemplate(db.dataSource());
        jdbc.execute("CREATE TABLE effect (handler text NOT NULL, event_id uuid NOT NULL, derived_key text NOT NULL)");
        store = HandlerClaimStore.create(db.dataSource());
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        producer = new KafkaProducer<>(config, new StringSerializer(), new ByteArraySerializer());
    }

    @BeforeEach
    void setUp() {
        topic = "d" + UUID.randomUUID().toString().substring(0, 8) + ".order";
        TestKafka.createTopic(topic, 2);
        TestKafka.createTopic(topic + WireFormat.DEAD_LETTER_SUFFIX, 1);
        jdbc.update("DELETE FROM effect");
    }

    @AfterEach
    void stop() {
        if (dispatcher != null) {
            dispatcher.close();
        }
    }

    /** projection (TRANSACTIONAL) writes its effect in the claim's transaction; mailer (LEASED) in its own. */
    void start(int maxAttempts) {
        EventHandler projection = event -> {
            failIfScripted("projection");
            jdbc.update("INSERT INTO effect VALUES ('projection', ?, ?)", event.eventId(), event.derivedKey());
        };
        EventHandler mailer = event -> {
            failIfScripted("mailer");
            jdbc.update("INSERT INTO effect VALUES ('mailer', ?, ?)", event.eventId(), event.derivedKey());
        };
        EventDispatcher core = new EventDispatcher(store, new DataSourceTransactionManager(db.dataSource()), List.of(
                HandlerRegistration.transactional("OrderPlaced", 1, "projection", projection),
                HandlerRegistration.leased("OrderPlaced", 1, "mailer", mailer)), ClaimPolicy.ofDefaults(), RecordSigning.off());
        dispatcher = new KafkaEventDispatcher(TestKafka.bootstrapServers(), "g-" + topic, core, 2, maxAttempts, topic);
        dispatcher.start();
    }

    void failIfScripted(String handler) {
        AtomicInteger left = failuresLeft.get(handler);
        if (left != null && left.getAndDecrement() > 0) {
            throw new IllegalStateException(handler + " is down");
        }
    }

    UUID publish(UUID id, String payload, Map<String, String> headers) {
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, "o-1", payload.getBytes(StandardCharsets.UTF_8));
        headers.forEach((k, v) -> record.headers().add(k, v.getBytes(StandardCharsets.UTF_8)));
        TestKafka.sendAll(producer, List.of(record));
        return id;
    }

    UUID publish(UUID id) {
        return publish(id, "{\"order\":\"" + id + "\"}", Map.of(WireFormat.EVENT_ID, id.toString(),
                WireFormat.TENANT_ID, "acme", WireFormat.ACTOR_ID, "alice", WireFormat.EVENT_TYPE, "OrderPlaced",
                WireFormat.EVENT_VERSION, "1"));
    }

    long effects(String handler, UUID id) {
        return jdbc.queryForObject("SELECT count(*) FROM effect WHERE handler = ? AND event_id = ?", Long.class, handler, id);
    }

    @Test
    void the_same_event_delivered_three_times_takes_effect_once_per_handler() {
        start(3);
        UUID id = UUID.randomUUID();

        publish(id);
        publish(id);
        publish(id);
        UUID marker = publish(UUID.randomUUID());

        await().atMost(Duration.ofSeconds(60)).until(() -> effects("projection", marker) == 1 && effects("mailer", marker) == 1);
        assertThat(effects("projection", id)).isEqualTo(1);
        assertThat(effects("mailer", id)).isEqualTo(1);
        assertThat(jdbc.queryForObject("SELECT derived_key FROM effect WHERE handler = 'mailer' AND event_id = ?", String.class, id))
                .isEqualTo(id + ":mailer");
    }

    @Test
    void a_poison_record_goes_to_the_dead_letter_topic_and_the_partition_keeps_flowing() {
        start(3);
        publish(UUID.randomUUID(), "{}", Map.of(WireFormat.EVENT_ID, UUID.randomUUID().toString(),
                WireFormat.EVENT_TYPE, "OrderPlaced", WireFormat.EVENT_VERSION, "1")); // no tenant
        publish(UUID.randomUUID(), "not json", Map.of(WireFormat.EVENT_ID, UUID.randomUUID().toString(),
                WireFormat.TENANT_ID, "acme", WireFormat.ACTOR_ID, "alice", WireFormat.EVENT_TYPE, "OrderPlaced",
                WireFormat.EVENT_VERSION, "1"));
        publish(UUID.randomUUID(), "{}", Map.of(WireFormat.EVENT_ID, UUID.randomUUID().toString(),
                WireFormat.TENANT_ID, "acme", WireFormat.ACTOR_ID, "alice", WireFormat.EVENT_TYPE, "OrderPlaced",
                WireFormat.EVENT_VERSION, "7")); // an unknown version, held only with parking: without, dead-lettered
        UUID next = publish(UUID.randomUUID());

        await().atMost(Duration.ofSeconds(60)).until(() -> effects("projection", next) == 1);
        List<ConsumerRecord<String, byte[]>> dead = deadLetters(3);
        assertThat(dead).extracting(r -> header(r, WireFormat.DLT_REASON)).containsExactlyInAnyOrder(
                "Header tenant_id is missing", "No handler for OrderPlaced v7, and holding it needs parking "
                        + "(once.dispatcher.parking.enabled)",
                dead.stream().map(r -> header(r, WireFormat.DLT_REASON)).filter(s -> s.startsWith("Payload is not JSON"))
                        .findFirst().orElse("a not-JSON reason"));
        assertThat(dead).allSatisfy(r -> assertThat(header(r, WireFormat.DLT_ATTEMPTS)).isEqualTo("1"));
    }

    @Test
    void a_handler_that_fails_twice_then_succeeds_takes_effect_once() {
        failuresLeft.put("projection", new AtomicInteger(2));
        start(4);
        UUID id = publish(UUID.randomUUID());

        await().atMost(Duration.ofSeconds(60)).until(() -> effects("projection", id) == 1);
        assertThat(effects("mailer", id)).as("the other handler ran once, not once per retry").isEqualTo(1);
    }

    @Test
    void a_handler_that_always_fails_is_dead_lettered_marked_failed_and_does_not_block_the_next_record() {
        failuresLeft.put("projection", new AtomicInteger(1_000));
        start(3);
        UUID doomed = publish(UUID.randomUUID());

        List<ConsumerRecord<String, byte[]>> dead = deadLetters(1);
        assertThat(header(dead.get(0), WireFormat.DLT_HANDLER)).isEqualTo("projection");
        assertThat(header(dead.get(0), WireFormat.DLT_ATTEMPTS)).isEqualTo("3");
        assertThat(header(dead.get(0), WireFormat.DLT_REASON)).contains("projection is down");
        assertThat(effects("projection", doomed)).isZero();
        assertThat(effects("mailer", doomed)).as("the succeeding handler is not re-run").isEqualTo(1);
        assertThat(jdbc.queryForObject("""
                SELECT c.status FROM once_handler_claim c JOIN once_handler_route r ON r.id = c.route_id
                WHERE c.event_id = CAST(? AS uuid) AND r.route LIKE '%:projection'""",
                Integer.class, doomed.toString())).as("3: failed").isEqualTo(3);

        failuresLeft.put("projection", new AtomicInteger(0));
        UUID next = publish(UUID.randomUUID());
        await().atMost(Duration.ofSeconds(60)).until(() -> effects("projection", next) == 1);
        publish(doomed);
        UUID marker = publish(UUID.randomUUID());
        await().atMost(Duration.ofSeconds(60)).until(() -> effects("projection", marker) == 1);
        assertThat(effects("projection", doomed)).as("a failed claim is not re-run on redelivery").isZero();
    }

    @Test
    void two_consumers_with_one_joining_and_one_leaving_mid_stream_give_exactly_one_effect_per_event_and_handler() {
        TestKafka.createTopic(topic + ".wide", 4);
        EventDispatcher core = new EventDispatcher(store, new DataSourceTransactionManager(db.dataSource()), List.of(
                HandlerRegistration.transactional("OrderPlaced", 1, "projection", event ->
                        jdbc.update("INSERT INTO effect VALUES ('projection', ?, ?)", event.eventId(), event.derivedKey())),
                HandlerRegistration.leased("OrderPlaced", 1, "mailer", event ->
                        jdbc.update("INSERT INTO effect VALUES ('mailer', ?, ?)", event.eventId(), event.derivedKey()))),
                ClaimPolicy.ofDefaults(), RecordSigning.off());
        String wide = topic + ".wide";
        KafkaEventDispatcher first = new KafkaEventDispatcher(TestKafka.bootstrapServers(), "g-" + wide, core, 1, 3, wide);
        first.start();
        List<ProducerRecord<String, byte[]>> records = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            UUID id = UUID.randomUUID();
            ProducerRecord<String, byte[]> record = new ProducerRecord<>(wide, "o-" + (i % 97),
                    ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8));
            Map.of(WireFormat.EVENT_ID, id.toString(), WireFormat.TENANT_ID, "acme", WireFormat.ACTOR_ID, "alice",
                    WireFormat.EVENT_TYPE, "OrderPlaced", WireFormat.EVENT_VERSION, "1")
                    .forEach((k, v) -> record.headers().add(k, v.getBytes(StandardCharsets.UTF_8)));
            records.add(record);
        }
        TestKafka.sendAll(producer, records);

        awaitOrExplain(Duration.ofSeconds(120), () -> effectCount("projection") >= 1_000);
        KafkaEventDispatcher second = new KafkaEventDispatcher(TestKafka.bootstrapServers(), "g-" + wide, core, 1, 3, wide);
        second.start(); // joins: the group rebalances
        awaitOrExplain(Duration.ofSeconds(120), () -> effectCount("projection") >= 3_000);
        first.close(); // leaves: the group rebalances again
        try {
            awaitOrExplain(Duration.ofSeconds(180), () -> effectCount("projection") == 5_000 && effectCount("mailer") == 5_000);
        } finally {
            second.close();
        }

        for (String handler : List.of("projection", "mailer")) {
            assertThat(effectCount(handler)).isEqualTo(5_000);
            assertThat(jdbc.queryForObject("SELECT count(DISTINCT event_id) FROM effect WHERE handler = ?", Long.class, handler))
                    .as("no duplicates for " + handler).isEqualTo(5_000);
        }
    }

    @Test
    void a_consumer_stopped_in_the_middle_of_a_handler_leaves_no_effect_and_the_restart_takes_effect_once() throws Exception {
        java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        AtomicInteger calls = new AtomicInteger();
        EventDispatcher core = new EventDispatcher(store, new DataSourceTransactionManager(db.dataSource()), List.of(
                HandlerRegistration.transactional("OrderPlaced", 1, "projection", event -> {
                    jdbc.update("INSERT INTO effect VALUES ('projection', ?, ?)", event.eventId(), event.derivedKey());
                    if (calls.incrementAndGet() == 1) {
                        entered.countDown();
                        release.await(30, java.util.concurrent.TimeUnit.SECONDS);
                        throw new IllegalStateException("the consumer went away mid-handler");
                    }
                })), ClaimPolicy.ofDefaults(), RecordSigning.off());
        KafkaEventDispatcher first = new KafkaEventDispatcher(TestKafka.bootstrapServers(), "g-" + topic, core, 1, 3, topic);
        first.start();
        UUID id = publish(UUID.randomUUID());
        assertThat(entered.await(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();

        Thread stopping = new Thread(first::close);
        stopping.start();
        release.countDown();
        stopping.join(60_000);
        assertThat(effects("projection", id)).as("whatever the stopping consumer managed, at most once").isLessThanOrEqualTo(1);

        KafkaEventDispatcher second = new KafkaEventDispatcher(TestKafka.bootstrapServers(), "g-" + topic, core, 1, 3, topic);
        second.start();
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> effects("projection", id) == 1);
            UUID marker = publish(UUID.randomUUID());
            await().atMost(Duration.ofSeconds(60)).until(() -> effects("projection", marker) == 1);
        } finally {
            second.close();
        }
        assertThat(effects("projection", id)).isEqualTo(1);
    }

    /** Waits for the condition; when it times out, the failure tells what the effects, claims and consumers were doing. */
    void awaitOrExplain(Duration max, Callable<Boolean> condition) {
        try {
            await().atMost(max).until(condition);
        } catch (ConditionTimeoutException e) {
            StringBuilder why = new StringBuilder(e.getMessage());
            AssertionError failure = new AssertionError(e.getMessage(), e);
            try {
                why.append("\neffects: ").append(jdbc.queryForList(
                        "SELECT handler, count(*) AS effects, count(DISTINCT event_id) AS events FROM effect GROUP BY handler"));
                why.append("\nclaims not succeeded: ").append(jdbc.queryForList("""
                        SELECT r.route, c.status, count(*) AS claims, min(c.locked_until - now()) AS lease_left
                        FROM once_handler_claim c JOIN once_handler_route r ON r.id = c.route_id
                        WHERE c.status <> 2 GROUP BY r.route, c.status"""));
                Thread.getAllStackTraces().forEach((thread, stack) -> {
                    if (thread.getName().contains("-C-")
                            || Arrays.stream(stack).anyMatch(f -> f.getClassName().startsWith("dev.once.dispatch.Event"))) {
                        why.append("\n\"").append(thread.getName()).append("\" ").append(thread.getState());
                        Arrays.stream(stack).limit(40).forEach(frame -> why.append("\n    at ").append(frame));
                    }
                });
                failure = new AssertionError(why.toString(), e);
            } catch (RuntimeException diagnosing) {
                failure.addSuppressed(diagnosing); // the timeout stays the failure
            }
            throw failure;
        }
    }

    long effectCount(String handler) {
        return jdbc.queryForObject("SELECT count(*) FROM effect WHERE handler = ?", Long.class, handler);
    }

    List<ConsumerRecord<String, byte[]>> deadLetters(int count) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "dlt-" + UUID.randomUUID());
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(config, new StringDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic + WireFormat.DEAD_LETTER_SUFFIX));
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
                return records.size() >= count;
            });
        }
        return records;
    }

    static String header(ConsumerRecord<String, byte[]> record, String name) {
        var header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }
}
