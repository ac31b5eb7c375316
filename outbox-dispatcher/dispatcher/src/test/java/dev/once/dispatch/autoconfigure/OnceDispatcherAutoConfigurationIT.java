package dev.once.dispatch.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.autoconfigure.OnceStoreAutoConfiguration;
import dev.once.dispatch.EventDispatcher;
import dev.once.dispatch.HandlerRegistration;
import dev.once.dispatch.KafkaEventDispatcher;
import dev.once.idempotency.ClaimPartitions;
import dev.once.idempotency.HandlerClaimStore;
import dev.once.test.SecuredKafka;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.test.TestSigning;
import dev.once.wire.RecordSigning;
import dev.once.wire.SigningKeys;
import dev.once.wire.WireFormat;
import dev.once.wire.autoconfigure.OnceSigningAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;

/** Handlers declared as beans run exactly once through the autoconfigured consumers, with metrics. */
class OnceDispatcherAutoConfigurationIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(6);

    /** Signs as the relay of a service with {@link TestSigning#PROPERTY} does. */
    static final RecordSigning RELAY = RecordSigning.require(SigningKeys.of(Map.of(TestSigning.KEY_ID, TestSigning.SECRET),
            null));

    private ApplicationContextRunner runner() {
        DataSource shared = new DelegatingDataSource(db.dataSource());
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
                        OnceStoreAutoConfiguration.class, OnceSigningAutoConfiguration.class,
                        OnceDispatcherAutoConfiguration.class))
                .withPropertyValues(TestSigning.PROPERTY)
                .withBean(DataSource.class, () -> shared)
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withBean("projection", HandlerRegistration.class, () -> HandlerRegistration.transactional("OrderPlaced", 1,
                        "projection", event -> new JdbcTemplate(shared).update("INSERT INTO effect VALUES (?)", event.eventId())));
    }

    @Test
    void without_topics_the_dispatcher_exists_but_no_consumer_runs() {
        runner().run(context -> {
            assertThat(context).hasSingleBean(EventDispatcher.class).hasSingleBean(HandlerClaimStore.class)
                    .hasSingleBean(ClaimPartitions.class)
                    .doesNotHaveBean(KafkaEventDispatcher.class);
        });
    }

    @Test
    void a_handler_bean_handles_each_event_once_and_is_measured() {
        String topic = newTopic("auto");
        UUID id = UUID.randomUUID();
        publishTwice(topic, id);

        runner().withPropertyValues("once.dispatcher.topics=" + topic, "once.dispatcher.group-id=g-" + topic,
                "spring.kafka.bootstrap-servers=" + TestKafka.bootstrapServers()).run(context -> {
            JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                var skipped = meters.find("once.dispatcher.skipped").tag("handler", "projection").counter();
                return jdbc.queryForObject("SELECT count(*) FROM effect WHERE event_id = ?", Long.class, id) == 1
                        && skipped != null && skipped.count() == 1;
            });
            assertThat(meters.get("once.dispatcher.handled").tag("handler", "projection").counter().count()).isEqualTo(1);
        });
    }

    @Test
    void over_sasl_with_credentials_in_spring_kafka_only_it_handles_events_and_dead_letters_the_unhandleable() {
        String topic = "sasl" + UUID.randomUUID().toString().substring(0, 6) + ".order";
        SecuredKafka.createTopic(topic, 1);
        SecuredKafka.createTopic(WireFormat.deadLetterTopic(topic), 1);
        new JdbcTemplate(db.dataSource()).execute("CREATE TABLE IF NOT EXISTS effect (event_id uuid NOT NULL)");
        UUID handled = UUID.randomUUID();
        UUID unhandleable = UUID.randomUUID();
        Map<String, Object> sasl = SecuredKafka.saslClientProperties(SecuredKafka.USER, SecuredKafka.PASSWORD);
        publish(sasl, List.of(event(topic, handled, "OrderPlaced"), event(topic, unhandleable, "OrderVanished")));

        // a foreign type is skipped by default; this service asks for it to be dead-lettered
        runner().withPropertyValues("once.dispatcher.topics=" + topic, "once.dispatcher.group-id=g-" + topic,
                        "once.dispatcher.unhandled.foreign-type=dead-letter")
                .withPropertyValues(SecuredKafka.springSasl(SecuredKafka.USER, SecuredKafka.PASSWORD).toArray(String[]::new))
                .run(context -> {
                    JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
                    await().atMost(Duration.ofSeconds(60)).until(() -> jdbc.queryForObject(
                            "SELECT count(*) FROM effect WHERE event_id = ?", Long.class, handled) == 1);
                    assertThat(deadLetterIds(sasl, WireFormat.deadLetterTopic(topic))).containsExactly(unhandleable.toString());
                    Health health = context.getBean("onceDispatcherHealthIndicator", HealthIndicator.class).health();
                    assertThat(health.getStatus()).isEqualTo(Status.UP);
                    assertThat(health.getDetails().get("parked")).as("parking on by default, nothing parked")
                            .isEqualTo(Map.of("enabled", true));
                });
    }

    @Test
    void a_version_without_a_handler_is_held_and_a_foreign_type_skipped_each_counted_and_health_stays_up_with_the_hold() {
        String topic = newTopic("held");
        UUID handled = UUID.randomUUID();
        UUID newer = UUID.randomUUID();
        publish(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers()), List.of(
                event(topic, handled, "OrderPlaced"), event(topic, UUID.randomUUID(), "InvoiceSent"),
                event(topic, newer, "OrderPlaced", 2)));

        runner().withPropertyValues("once.dispatcher.topics=" + topic, "once.dispatcher.group-id=g-" + topic,
                "spring.kafka.bootstrap-servers=" + TestKafka.bootstrapServers()).run(context -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            await().atMost(Duration.ofSeconds(60)).until(() -> unhandled(meters, "OrderPlaced", "unknown_version", "held") == 1
                    && unhandled(meters, "InvoiceSent", "foreign_type", "skipped") == 1);
            assertThat(meters.get("once.dispatcher.parked").tag("reason", "held").counter().count()).isEqualTo(1);
            assertThat(new JdbcTemplate(db.dataSource()).queryForObject("SELECT count(*) FROM effect WHERE event_id = ?",
                    Long.class, handled)).isEqualTo(1);

            Health health = context.getBean("onceDispatcherHealthIndicator", HealthIndicator.class).health();
            assertThat(health.getStatus()).as("a rolling deploy must not fail its own readiness").isEqualTo(Status.UP);
            assertThat(health.getDetails().get("parked")).isEqualTo(Map.of("enabled", true, "held-events", 1L,
                    "held-keys", 1L));
        });
    }

    private static double unhandled(MeterRegistry meters, String type, String reason, String action) {
        var counter = meters.find("once.dispatcher.unhandled").tag("type", type).tag("reason", reason)
                .tag("action", action).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void an_unsigned_record_is_dead_lettered_before_any_claim_counted_by_reason_and_health_shows_the_mode() {
        String topic = newTopic("signed");
        UUID forged = UUID.randomUUID();
        UUID real = UUID.randomUUID();
        publish(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers()),
                List.of(unsigned(topic, forged), event(topic, real, "OrderPlaced")));

        runner().withPropertyValues("once.dispatcher.topics=" + topic, "once.dispatcher.group-id=g-" + topic,
                "spring.kafka.bootstrap-servers=" + TestKafka.bootstrapServers()).run(context -> {
            JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
            await().atMost(Duration.ofSeconds(60)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM effect WHERE event_id = ?", Long.class, real) == 1);
            assertThat(deadLetterIds(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers()),
                    topic + WireFormat.DEAD_LETTER_SUFFIX)).containsExactly(forged.toString());
            assertThat(jdbc.queryForObject("SELECT count(*) FROM once_handler_claim WHERE event_id = ?", Long.class,
                    forged)).isZero();
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            assertThat(meters.get("once.dispatcher.rejected").tag("reason", "SIGNATURE_MISSING").counter().count())
                    .isEqualTo(1);
            Health health = context.getBean("onceDispatcherHealthIndicator", HealthIndicator.class).health();
            assertThat(health.getDetails().get("signing")).isEqualTo("require, signing with key " + TestSigning.KEY_ID
                    + ", verifying keys " + TestSigning.KEY_ID);
            assertThat(health.toString()).doesNotContain(TestSigning.SECRET);
        });
    }

    /** A topic of its own with its dead-letter topic, on the plain broker; and the effects' table. */
    private static String newTopic(String prefix) {
        String topic = prefix + UUID.randomUUID().toString().substring(0, 6) + ".order";
        TestKafka.createTopic(topic, 1);
        TestKafka.createTopic(topic + WireFormat.DEAD_LETTER_SUFFIX, 1);
        new JdbcTemplate(db.dataSource()).execute("CREATE TABLE IF NOT EXISTS effect (event_id uuid NOT NULL)");
        return topic;
    }

    /** The event ids of the first record on {@code topic}, read over {@code client}'s connection. */
    private static List<String> deadLetterIds(Map<String, Object> client, String topic) {
        Map<String, Object> config = new HashMap<>(client);
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "check-" + UUID.randomUUID());
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<String> ids = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(config, new StringDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                consumer.poll(Duration.ofMillis(200)).forEach(record -> ids.add(
                        new String(record.headers().lastHeader(WireFormat.EVENT_ID).value(), StandardCharsets.UTF_8)));
                return !ids.isEmpty();
            });
        }
        return ids;
    }

    private static void publishTwice(String topic, UUID id) {
        publish(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers()),
                List.of(event(topic, id, "OrderPlaced"), event(topic, id, "OrderPlaced")));
    }

    /** An event signed as the relay signs it, with the key the dispatcher is configured with. */
    private static ProducerRecord<String, byte[]> event(String topic, UUID id, String type) {
        return event(topic, id, type, 1);
    }

    private static ProducerRecord<String, byte[]> event(String topic, UUID id, String type, int version) {
        ProducerRecord<String, byte[]> record = unsigned(topic, id, type);
        record.headers().remove(WireFormat.EVENT_VERSION);
        record.headers().add(WireFormat.EVENT_VERSION, Integer.toString(version).getBytes(StandardCharsets.UTF_8));
        RELAY.sign(record);
        return record;
    }

    private static ProducerRecord<String, byte[]> unsigned(String topic, UUID id) {
        return unsigned(topic, id, "OrderPlaced");
    }

    private static ProducerRecord<String, byte[]> unsigned(String topic, UUID id, String type) {
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, "o-1", "{}".getBytes(StandardCharsets.UTF_8));
        for (String[] h : new String[][] {{WireFormat.EVENT_ID, id.toString()}, {WireFormat.TENANT_ID, "acme"},
                {WireFormat.ACTOR_ID, "alice"}, {WireFormat.EVENT_TYPE, type}, {WireFormat.EVENT_VERSION, "1"}}) {
            record.headers().add(h[0], h[1].getBytes(StandardCharsets.UTF_8));
        }
        return record;
    }

    private static void publish(Map<String, Object> client, List<ProducerRecord<String, byte[]>> records) {
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(client, new StringSerializer(), new ByteArraySerializer())) {
            TestKafka.sendAll(producer, records);
        }
    }
}
