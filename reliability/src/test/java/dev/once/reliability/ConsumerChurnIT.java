package dev.once.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.dispatch.EventDispatcher;
import dev.once.dispatch.HandlerRegistration;
import dev.once.dispatch.KafkaEventDispatcher;
import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.HandlerClaimStore;
import dev.once.idempotency.OnceMigrations;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.wire.RecordSigning;
import dev.once.wire.WireFormat;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * Scenario 5: consumers join and leave the group again and again while 12,000 events stream through six
 * partitions. Every rebalance hands partitions over with records in flight; the claims make each handler's effect
 * happen once per event regardless.
 */
@ExtendWith(SummaryWatcher.class)
class ConsumerChurnIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(20);

    static final int EVENTS = 12_000;

    @Test
    void consumers_joining_and_leaving_during_twelve_thousand_events_give_one_effect_per_event_and_handler() {
        OnceMigrations.migrate(db.dataSource());
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        jdbc.execute("CREATE TABLE effect (handler text NOT NULL, event_id uuid NOT NULL, derived_key text NOT NULL)");
        String topic = "churn" + UUID.randomUUID().toString().substring(0, 8) + ".order";
        TestKafka.createTopic(topic, 6);
        TestKafka.createTopic(topic + WireFormat.DEAD_LETTER_SUFFIX, 1);
        EventDispatcher core = new EventDispatcher(HandlerClaimStore.create(db.dataSource()),
                new DataSourceTransactionManager(db.dataSource()), List.of(
                HandlerRegistration.transactional("OrderPlaced", 1, "projection", event ->
                        jdbc.update("INSERT INTO effect VALUES ('projection', ?, ?)", event.eventId(), event.derivedKey())),
                HandlerRegistration.leased("OrderPlaced", 1, "mailer", event ->
                        jdbc.update("INSERT INTO effect VALUES ('mailer', ?, ?)", event.eventId(), event.derivedKey()))),
                ClaimPolicy.ofDefaults(), RecordSigning.off());

        Deque<KafkaEventDispatcher> members = new ArrayDeque<>();
        members.add(join(topic, core));
        produce(topic);
        int churns = 0;
        for (int milestone = 1_000; milestone < EVENTS - 1_000; milestone += 1_000) {
            int reached = milestone;
            await().atMost(Duration.ofSeconds(120)).until(() -> effects(jdbc, "projection") >= reached);
            if (churns % 2 == 0 || members.size() == 1) {
                members.add(join(topic, core)); // a consumer joins: the group rebalances
            } else {
                members.poll().close();          // the oldest leaves: the group rebalances again
            }
            churns++;
        }
        try {
            await().atMost(Duration.ofSeconds(180)).until(() ->
                    effects(jdbc, "projection") >= EVENTS && effects(jdbc, "mailer") >= EVENTS);
        } finally {
            members.forEach(KafkaEventDispatcher::close);
        }

        long lost = 0;
        long duplicated = 0;
        for (String handler : List.of("projection", "mailer")) {
            long distinct = jdbc.queryForObject("SELECT count(DISTINCT event_id) FROM effect WHERE handler = ?", Long.class,
                    handler);
            lost += EVENTS - distinct;
            duplicated += effects(jdbc, handler) - distinct;
        }
        Summary.record(new Summary.Row("5 consumer group churn (6 partitions)", EVENTS, churns, lost, duplicated,
                lost == 0 && duplicated == 0, churns + " joins/leaves, up to 3 consumers; 2 handlers"));
        assertThat(churns).isGreaterThanOrEqualTo(10);
        assertThat(lost).isZero();
        assertThat(duplicated).isZero();
    }

    static KafkaEventDispatcher join(String topic, EventDispatcher core) {
        KafkaEventDispatcher member = new KafkaEventDispatcher(TestKafka.bootstrapServers(), "g-" + topic, core, 1, 3, topic);
        member.start();
        return member;
    }

    static void produce(String topic) {
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        try (KafkaProducer<String, byte[]> producer =
                     new KafkaProducer<>(config, new StringSerializer(), new ByteArraySerializer())) {
            List<ProducerRecord<String, byte[]>> records = new ArrayList<>();
            for (int i = 0; i < EVENTS; i++) {
                ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, "order-" + (i % 211),
                        ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8));
                Map.of(WireFormat.EVENT_ID, UUID.randomUUID().toString(), WireFormat.TENANT_ID, "acme",
                                WireFormat.ACTOR_ID, "alice", WireFormat.EVENT_TYPE, "OrderPlaced",
                                WireFormat.EVENT_VERSION, "1")
                        .forEach((k, v) -> record.headers().add(k, v.getBytes(StandardCharsets.UTF_8)));
                records.add(record);
            }
            TestKafka.sendAll(producer, records);
        }
    }

    static long effects(JdbcTemplate jdbc, String handler) {
        return jdbc.queryForObject("SELECT count(*) FROM effect WHERE handler = ?", Long.class, handler);
    }
}
