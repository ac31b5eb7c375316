package dev.once.test;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;
import org.testcontainers.kafka.KafkaContainer;

/**
 * Finds one real Kafka broker per test JVM, in this order: {@code ONCE_TEST_KAFKA_BOOTSTRAP} when set; a
 * Testcontainers Kafka (KRaft) when a Docker engine answers; an in-process KRaft broker
 * ({@link EmbeddedKafkaKraftBroker}) otherwise. Tests create their own uniquely named topics.
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
        EmbeddedKafkaKraftBroker broker = new EmbeddedKafkaKraftBroker(1, 1);
        broker.brokerProperties(Map.of(
                "auto.create.topics.enable", "false",
                "log.flush.interval.messages", "1000000",
                "group.initial.rebalance.delay.ms", "0",
                "offsets.topic.replication.factor", "1",
                "transaction.state.log.replication.factor", "1",
                "transaction.state.log.min.isr", "1"));
        broker.afterPropertiesSet();
        Runtime.getRuntime().addShutdownHook(new Thread(broker::destroy, "embedded-kafka-stop"));
        log.info("Tests use Kafka at {} (embedded KRaft)", broker.getBrokersAsString());
        return broker.getBrokersAsString();
    }

    /** Creates {@code topic} with {@code partitions} partitions unless it exists; waits until it does. */
    public static void createTopic(String topic, int partitions) {
        Properties config = new Properties();
        config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        try (Admin admin = Admin.create(config)) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw new IllegalStateException("Could not create topic " + topic, e);
            }
        } catch (InterruptedException | TimeoutException e) {
            throw new IllegalStateException("Could not create topic " + topic, e);
        }
    }
}
