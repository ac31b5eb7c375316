package dev.once.test;

import static org.awaitility.Awaitility.await;

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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.kafka.KafkaContainer;

/**
 * Finds one real Kafka broker per test JVM, in this order: {@code ONCE_TEST_KAFKA_BOOTSTRAP} when set; a
 * Testcontainers Kafka (KRaft) when a Docker engine answers; the PLAINTEXT listener of the in-process KRaft broker
 * otherwise (the one {@link SecuredKafka} also serves, so a JVM runs one broker). Tests create their own uniquely
 * named topics.
 */
public final class TestKafka {

    public static final String BOOTSTRAP_ENV = "ONCE_TEST_KAFKA_BOOTSTRAP";

    private static final Logger log = LoggerFactory.getLogger(TestKafka.class);
    private static volatile String bootstrap;

    private TestKafka() {
    }

    /** {@code host:port[,host:port]} of the broker for this JVM, found (and if need be started) on first use. */
    public static String bootstrapServers() {
        String found = bootstrap;
        if (found == null) {
            synchronized (TestKafka.class) {
                found = bootstrap;
                if (found == null) {
                    found = find();
                    bootstrap = found;
                }
            }
        }
        return found;
    }

    private static String find() {
        String env = System.getenv(BOOTSTRAP_ENV);
        if (env != null && !env.isBlank()) {
            log.info("Tests use Kafka at {} (env)", env);
            return env;
        }
        if (TestPostgres.dockerAvailable()) {
            @SuppressWarnings("resource") // lives as long as the JVM; Testcontainers' reaper removes it
            KafkaContainer container = new KafkaContainer("apache/kafka:4.1.0");
            container.start();
            log.info("Tests use Kafka at {} (testcontainers)", container.getBootstrapServers());
            return container.getBootstrapServers();
        }
        String embedded = KraftBroker.get().plaintextBootstrap();
        log.info("Tests use Kafka at {} (embedded KRaft)", embedded);
        return embedded;
    }

    /**
     * Creates {@code topic} with {@code partitions} partitions unless it exists, and waits until every partition's
     * leader serves requests. A topic the controller has created may not be writable yet: a producer that meets
     * {@code NOT_LEADER_OR_FOLLOWER} on its first batch while its later batches land can end in an endless
     * {@code OUT_OF_ORDER_SEQUENCE_NUMBER} retry, and its records never arrive. A successful {@code ListOffsets} for
     * every partition proves each leader is online (asked again while a leader is not yet known).
     */
    public static void createTopic(String topic, int partitions) {
        createTopic(bootstrapServers(), topic, partitions, Map.of());
    }

    /** As {@link #createTopic(String, int)}, with topic-level {@code configs} (such as {@code max.message.bytes}). */
    public static void createTopic(String topic, int partitions, Map<String, String> configs) {
        createTopic(bootstrapServers(), topic, partitions, configs);
    }

    /** Sets topic-level {@code configs} of {@code topic}, and waits until the broker describes them so. */
    public static void configureTopic(String topic, Map<String, String> configs) {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        try (Admin admin = Admin.create(Map.<String, Object>of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                bootstrapServers()))) {
            admin.incrementalAlterConfigs(Map.of(resource, configs.entrySet().stream().map(c -> new AlterConfigOp(
                    new ConfigEntry(c.getKey(), c.getValue()), AlterConfigOp.OpType.SET)).toList()))
                    .all().get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                    .alias("the broker describes " + topic + " with " + configs)
                    .until(() -> {
                        var described = admin.describeConfigs(List.of(resource)).all().get(10, TimeUnit.SECONDS)
                                .get(resource);
                        return configs.entrySet().stream()
                                .allMatch(c -> c.getValue().equals(described.get(c.getKey()).value()));
                    });
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("Could not configure topic " + topic, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** As {@link #createTopic(String, int, Map)}, on the broker at {@code bootstrap} (which takes PLAINTEXT). */
    static void createTopic(String bootstrap, String topic, int partitions, Map<String, String> configs) {
        Properties config = new Properties();
        config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(config)) {
            try {
                admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1).configs(configs))).all().get(30, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw new IllegalStateException("Could not create topic " + topic, e);
                }
            }
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                    .alias("every partition of " + topic + " has an online leader")
                    .until(() -> leadersServe(admin, topic));
        } catch (InterruptedException | TimeoutException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("Topic " + topic + " did not become writable", e);
        }
    }

    /** Whether every partition's leader answers; {@code false} while one is not yet known (a retriable error). */
    private static boolean leadersServe(Admin admin, String topic) throws InterruptedException, TimeoutException {
        try {
            Map<TopicPartition, OffsetSpec> everyPartition = new HashMap<>();
            admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic).partitions()
                    .forEach(p -> everyPartition.put(new TopicPartition(topic, p.partition()), OffsetSpec.latest()));
            admin.listOffsets(everyPartition).all().get(10, TimeUnit.SECONDS);
            return true;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RetriableException) {
                return false;
            }
            throw new IllegalStateException("Topic " + topic + " did not become writable", e);
        }
    }

    /**
     * Sends {@code records} and waits until the broker has acknowledged every one; a record the producer gave up on
     * fails here, naming why, instead of leaving a test to wait for an effect that can never come.
     */
    /**
     * The distinct values of {@code header} (an event's id) on {@code topic} of the cluster at {@code bootstrap}, read
     * from the start, once at least {@code atLeast} have arrived (within two minutes).
     */
    public static Set<String> distinctHeaders(String bootstrap, String topic, String header, int atLeast) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "distinct-" + UUID.randomUUID());
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        Set<String> values = new HashSet<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            await(atLeast + " distinct " + header + " on " + topic).atMost(Duration.ofSeconds(120)).until(() -> {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    Header value = r.headers().lastHeader(header);
                    if (value != null) {
                        values.add(new String(value.value(), StandardCharsets.UTF_8));
                    }
                }
                return values.size() >= atLeast;
            });
        }
        return values;
    }

    public static <K, V> void sendAll(Producer<K, V> producer, List<ProducerRecord<K, V>> records) {
        List<Future<RecordMetadata>> acks = new ArrayList<>(records.size());
        records.forEach(record -> acks.add(producer.send(record)));
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2); // one deadline for all, no unbounded flush
        try {
            for (Future<RecordMetadata> ack : acks) {
                ack.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
        } catch (ExecutionException | InterruptedException | TimeoutException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("The broker did not acknowledge a test record", e);
        }
    }
}
