package dev.once.example;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.connect.ShippedConnector;
import dev.once.test.ReplicationCleanup;
import dev.once.test.TestDatabase;
import dev.once.test.TestSigning;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The reference service with {@code once.outbox.relay.mode=external}: it runs no relay, and a real Kafka Connect
 * cluster (in-process, the shipped connector configuration with once-connect) relays its outbox. Its own handlers
 * consume what Connect published, each exactly once per event, also when every record is delivered a second time.
 */
class KafkaConnectRelayIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    @TempDir
    static Path dataDir;

    static EmbeddedConnectCluster connect;
    static ServiceInstances instances;
    static Http http;
    static JdbcTemplate jdbc;
    static String slot;

    @BeforeAll
    static void start() throws InterruptedException {
        jdbc = new JdbcTemplate(db.dataSource());
        connect = new EmbeddedConnectCluster.Builder().name("once-reference-connect").numWorkers(1).numBrokers(1)
                .workerProps(new HashMap<>(Map.of("offset.flush.interval.ms", "500"))).build();
        ClassLoader application = Thread.currentThread().getContextClassLoader();
        connect.start();
        // Connect's plugin isolation leaves its own class loader as this thread's context loader; the service's
        // Spring Data proxies must come from the application's
        Thread.currentThread().setContextClassLoader(application);
        instances = new ServiceInstances(db, dataDir);
        slot = ("connect_" + db.schema()).toLowerCase();
        ConfigurableApplicationContext service = instances.start(List.of(
                "spring.kafka.bootstrap-servers=" + connect.kafka().bootstrapServers(),
                "once.outbox.relay.mode=external", "once.outbox.relay.external.slot-name=" + slot,
                // the ring the connector signs with, beside the service's own key
                TestSigning.PROPERTY, "once.outbox.signing.current-key=" + TestSigning.KEY_ID));
        http = new Http(ServiceInstances.baseOf(service));
        ShippedConnector.createPublication(jdbc, db.schema(), slot);
        Map<String, String> config = ShippedConnector.config(db.server(), db.schema(), slot, instances.topicPrefix());
        ShippedConnector.createHeartbeatTopic(connect, config);
        connect.configureConnector("once-reference", config);
        connect.assertions().assertConnectorAndAtLeastNumTasksAreRunning("once-reference", 1, "the connector did not start");
        await().atMost(Duration.ofSeconds(60)).until(() -> Boolean.TRUE.equals(jdbc.queryForObject(
                "SELECT count(*) > 0 FROM pg_replication_slots WHERE slot_name = ? AND active", Boolean.class, slot)));
    }

    @AfterAll
    static void stop() {
        if (instances != null) {
            instances.close();
        }
        if (connect != null) {
            connect.stop();
        }
        ReplicationCleanup.drop(db.dataSource(), slot, slot);
    }

    @Test
    void the_services_handlers_take_effect_once_per_event_from_what_connect_relays_and_once_more_after_a_redelivery() {
        for (int i = 0; i < 20; i++) {
            ReferenceServiceIT.created(http.post(i % 2 == 0 ? "alice" : "bob", "/accounts", ReferenceServiceIT.key(),
                    ReferenceServiceIT.account("Connect" + i)));
        }
        for (int i = 0; i < 10; i++) {
            assertThat(http.post("carol", "/tasks", ReferenceServiceIT.key(), ReferenceServiceIT.task("archive"))
                    .statusCode()).isEqualTo(202);
        }

        await().atMost(Duration.ofSeconds(90)).until(() -> effects("account-projection") == 20
                && effects("task-runner") == 10 && emails() == 20);
        assertOncePerEvent();

        // every account and task record once more, as a consumer-group reset or a replay delivers it
        List<String> topics = List.of(instances.topicPrefix() + ".account", instances.topicPrefix() + ".task");
        assertThat(topics.stream().mapToInt(KafkaConnectRelayIT::redeliver).sum()).isEqualTo(30);
        await().atMost(Duration.ofSeconds(90)).until(() -> consumedToTheEnd(instances.topicPrefix(), topics));
        assertThat(effects("account-projection")).isEqualTo(20);
        assertThat(effects("task-runner")).isEqualTo(10);
        assertThat(emails()).isEqualTo(20);
        assertOncePerEvent();
    }

    /** Whether the service's consumer group has committed every partition of {@code topics} up to its end. */
    static boolean consumedToTheEnd(String group, List<String> topics) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                connect.kafka().bootstrapServers()))) {
            Map<TopicPartition, OffsetAndMetadata> committed =
                    admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            Map<TopicPartition, Long> ends = endOffsets(topics);
            // a partition no record went to has nothing to commit: the group never commits an offset there
            return ends.entrySet().stream().allMatch(e -> e.getValue() == 0 || committed.get(e.getKey()) != null
                    && committed.get(e.getKey()).offset() >= e.getValue());
        }
    }

    static Map<TopicPartition, Long> endOffsets(List<String> topics) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, connect.kafka().bootstrapServers());
        try (KafkaConsumer<byte[], byte[]> consumer =
                     new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = topics.stream().flatMap(t -> consumer.partitionsFor(t).stream()
                    .map(p -> new TopicPartition(t, p.partition()))).toList();
            return consumer.endOffsets(partitions);
        }
    }

    static long effects(String handler) {
        return jdbc.queryForObject("SELECT count(*) FROM handler_effect WHERE handler_key = ?", Long.class, handler);
    }

    static long emails() {
        return jdbc.queryForObject("SELECT count(*) FROM outbound_email", Long.class);
    }

    static void assertOncePerEvent() {
        assertThat(jdbc.queryForObject("SELECT count(*) FROM (SELECT handler_key, event_id FROM handler_effect "
                + "GROUP BY handler_key, event_id HAVING count(*) > 1) twice", Long.class)).isZero();
        assertThat(jdbc.queryForObject("SELECT count(*) - count(DISTINCT event_id) FROM outbound_email", Long.class))
                .isZero();
    }

    /** Publishes every record of {@code topic} again, unchanged (signature included); returns how many. */
    static int redeliver(String topic) {
        Map<TopicPartition, Long> ends = endOffsets(List.of(topic));
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, connect.kafka().bootstrapServers());
        try (KafkaConsumer<byte[], byte[]> consumer =
                     new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.assign(ends.keySet());
            consumer.seekToBeginning(ends.keySet());
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
                return ends.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue());
            });
        }
        Properties producerConfig = new Properties();
        producerConfig.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, connect.kafka().bootstrapServers());
        try (KafkaProducer<byte[], byte[]> producer =
                     new KafkaProducer<>(producerConfig, new ByteArraySerializer(), new ByteArraySerializer())) {
            records.forEach(r -> producer.send(new ProducerRecord<>(r.topic(), null, r.key(), r.value(), r.headers())));
        }
        return records.size();
    }
}
