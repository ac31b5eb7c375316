package dev.once.example.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.wire.RecordSigning;
import dev.once.wire.WireFormat;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
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
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.util.ClassUtils;

/** The consumer-only role on exactly its declared dependencies: it starts and handles each event once. */
@SpringBootTest
class ConsumerOnlyIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    static final String TOPIC = "role" + UUID.randomUUID().toString().substring(0, 8) + ".order";

    @DynamicPropertySource
    static void infrastructure(DynamicPropertyRegistry registry) {
        TestKafka.createTopic(TOPIC, 1);
        TestKafka.createTopic(WireFormat.deadLetterTopic(TOPIC), 1);
        db.springProperties().forEach((name, value) -> registry.add(name, () -> value));
        registry.add("spring.kafka.bootstrap-servers", TestKafka::bootstrapServers);
        registry.add("once.dispatcher.topics", () -> TOPIC);
        registry.add("ONCE_SIGNING_KEY", () -> "a role test key of thirty-two bytes or more");
    }

    @Autowired
    RecordSigning signing;

    @Test
    void an_event_delivered_twice_is_handled_once() {
        UUID id = UUID.randomUUID();
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(TOPIC, "o-1",
                "{\"order_id\":\"o-1\"}".getBytes(StandardCharsets.UTF_8));
        Map.of(WireFormat.EVENT_ID, id.toString(), WireFormat.TENANT_ID, "acme", WireFormat.ACTOR_ID, "alice",
                        WireFormat.AGGREGATE_TYPE, "order", WireFormat.EVENT_TYPE, "OrderShipped",
                        WireFormat.EVENT_VERSION, "1")
                .forEach((name, value) -> record.headers().add(name, value.getBytes(StandardCharsets.UTF_8)));
        signing.sign(record);
        UUID marker = UUID.randomUUID();
        ProducerRecord<String, byte[]> next = new ProducerRecord<>(TOPIC, "o-2", record.value());
        record.headers().forEach(h -> next.headers().add(h.key(), WireFormat.EVENT_ID.equals(h.key())
                ? marker.toString().getBytes(StandardCharsets.UTF_8) : h.value()));
        next.headers().remove(WireFormat.SIGNATURE);
        next.headers().remove(WireFormat.SIGNATURE_KEY);
        signing.sign(next);
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(config, new StringSerializer(),
                new ByteArraySerializer())) {
            TestKafka.sendAll(producer, List.of(record, record, next));
        }

        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        await().atMost(Duration.ofSeconds(60)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM shipped_order WHERE event_id = ?", Long.class, marker) == 1);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM shipped_order WHERE event_id = ?", Long.class, id))
                .isEqualTo(1);
    }

    @Test
    void the_role_runs_without_debezium_or_a_web_server_on_its_classpath() {
        ClassLoader loader = getClass().getClassLoader();
        assertThat(ClassUtils.isPresent("io.debezium.engine.DebeziumEngine", loader)).isFalse();
        assertThat(ClassUtils.isPresent("org.springframework.web.servlet.DispatcherServlet", loader)).isFalse();
    }
}
