package dev.once.example;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.test.TestDatabase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringApplicationRunListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The embedded default ({@link EmbeddedServers}), booted through {@link ReferenceServiceApplication#main} itself, so
 * the wiring under test is the one {@code java -jar} runs: with no servers configured the service starts its own
 * PostgreSQL, with {@code wal_level=logical} and its data under {@code <data-dir>/postgres}, kept from one run to the
 * next, and Kafka's own KRaft server in-process, its log under {@code <data-dir>/kafka}, kept too; a configured
 * datasource URL is used instead of an embedded PostgreSQL.
 */
class EmbeddedDefaultIT {

    static final String WAL_LEVEL = "SHOW wal_level";
    static final String ACCOUNTS = "SELECT count(*) FROM account";
    static final String ADA = "{\"name\":\"Ada\",\"email\":\"ada@example.com\"}";

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(2);

    static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    Path dataDir;

    int kafkaPort = freePort();
    int controllerPort = freePort();

    @Test
    void with_nothing_configured_it_runs_on_embedded_servers_with_logical_decoding_and_keeps_its_data_between_runs() {
        String location;
        int postgresPort = freePort();
        try (ConfigurableApplicationContext first = main(nothingConfigured(postgresPort))) {
            awaitHealthy(first);
            assertThat(first.getEnvironment().getProperty("spring.datasource.url"))
                    .isEqualTo("jdbc:postgresql://localhost:" + postgresPort + "/postgres");
            assertThat(new JdbcTemplate(first.getBean(DataSource.class)).queryForObject(WAL_LEVEL, String.class))
                    .isEqualTo("logical");
            HttpResponse<String> created = http(first).post("alice", "/accounts", key(), ADA);
            assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
            location = created.headers().firstValue("Location").orElseThrow();
        }
        assertThat(dataDir.resolve("postgres").resolve("PG_VERSION")).isRegularFile();
        assertThat(dataDir.resolve("kafka").resolve("meta.properties")).isRegularFile();

        try (ConfigurableApplicationContext second = main(nothingConfigured(freePort()))) { // same directory, new port
            awaitHealthy(second);
            assertThat(recordsOn("localhost:" + kafkaPort, "once.account"))
                    .as("the broker kept the first run's event in its log under the data directory").isPositive();
            HttpResponse<String> read = http(second).get("alice", location);
            assertThat(read.statusCode()).as(read.body()).isEqualTo(200);
            assertThat(json(read).path("name").asString()).isEqualTo("Ada");
            assertThat(json(read).path("email").asString()).isEqualTo("ada@example.com");
            assertThat(json(read).path("tenant_id").asString()).isEqualTo("acme");
        }
    }

    @Test
    void a_configured_datasource_url_is_used_and_no_embedded_postgres_is_started() {
        int postgresPort = freePort();
        try (ConfigurableApplicationContext service = main("--server.port=0", "--spring.jmx.enabled=false",
                "--once.reference.data-dir=" + dataDir,
                "--spring.datasource.url=" + db.jdbcUrl(),
                "--spring.datasource.username=" + db.server().username(),
                "--spring.datasource.password=" + db.server().password(),
                "--spring.kafka.bootstrap-servers=", // Kafka is still the embedded one: each server is decided alone
                "--" + EmbeddedServers.POSTGRES_PORT + "=" + postgresPort,
                "--" + EmbeddedServers.KAFKA_PORT + "=" + kafkaPort,
                "--" + EmbeddedServers.KAFKA_CONTROLLER_PORT + "=" + controllerPort,
                "--once.outbox.relay.mode=polling")) { // no replication slot left behind on the shared test server
            awaitHealthy(service);
            assertThat(service.getEnvironment().getProperty("spring.datasource.url")).isEqualTo(db.jdbcUrl());
            assertThat(dataDir.resolve("postgres")).doesNotExist();
            assertThat(listening(postgresPort)).as("an embedded PostgreSQL on port " + postgresPort).isFalse();
            HttpResponse<String> created = http(service).post("alice", "/accounts", key(), ADA);
            assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
            assertThat(new JdbcTemplate(db.dataSource()).queryForObject(ACCOUNTS, Long.class)).isOne(); // written there
        }
    }

    /**
     * Runs {@code ReferenceServiceApplication.main(args)} and returns the context it started: Spring Boot's
     * {@link SpringApplication#withHook} observes the application {@code main} builds, without changing it.
     */
    static ConfigurableApplicationContext main(String... args) {
        AtomicReference<ConfigurableApplicationContext> started = new AtomicReference<>();
        SpringApplication.withHook(application -> new SpringApplicationRunListener() {
            @Override
            public void started(ConfigurableApplicationContext context, Duration timeTaken) {
                started.set(context);
            }
        }, () -> ReferenceServiceApplication.main(args));
        return started.get();
    }

    /**
     * No servers: the datasource URL and the bootstrap servers blank, as application.yaml leaves them without
     * {@code ONCE_JDBC_URL} and {@code ONCE_KAFKA_BOOTSTRAP} (command-line arguments outrank whatever this JVM's
     * environment holds). Free ports instead of the fixed defaults, so a service running on this machine is no bother.
     */
    String[] nothingConfigured(int postgresPort) {
        return new String[] {"--server.port=0", "--spring.jmx.enabled=false", "--once.reference.data-dir=" + dataDir,
                "--spring.datasource.url=", "--spring.kafka.bootstrap-servers=",
                "--" + EmbeddedServers.POSTGRES_PORT + "=" + postgresPort,
                "--" + EmbeddedServers.KAFKA_PORT + "=" + kafkaPort,
                "--" + EmbeddedServers.KAFKA_CONTROLLER_PORT + "=" + controllerPort};
    }

    /** How many records {@code topic} holds, read from its first offsets to its last by a consumer of no group. */
    static long recordsOn(String bootstrap, String topic) {
        try (org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]> consumer =
                     new org.apache.kafka.clients.consumer.KafkaConsumer<>(java.util.Map.of(
                             "bootstrap.servers", bootstrap),
                             new org.apache.kafka.common.serialization.ByteArrayDeserializer(),
                             new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
            java.util.List<org.apache.kafka.common.TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new org.apache.kafka.common.TopicPartition(topic, p.partition())).toList();
            java.util.Map<org.apache.kafka.common.TopicPartition, Long> begin = consumer.beginningOffsets(partitions);
            return consumer.endOffsets(partitions).entrySet().stream()
                    .mapToLong(e -> e.getValue() - begin.get(e.getKey())).sum();
        }
    }

    static void awaitHealthy(ConfigurableApplicationContext service) {
        Http http = http(service);
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            JsonNode health = json(http.get(null, "/actuator/health"));
            assertThat(health.path("status").asString()).isEqualTo("UP");
            assertThat(health.path("components").path("db").path("status").asString()).isEqualTo("UP");
            assertThat(health.path("components").path("onceOutboxRelay").path("status").asString()).isEqualTo("UP");
            assertThat(health.path("components").path("onceDispatcher").path("status").asString()).isEqualTo("UP");
        });
    }

    static Http http(ConfigurableApplicationContext service) {
        return new Http(ServiceInstances.baseOf(service));
    }

    static JsonNode json(HttpResponse<String> response) {
        return JSON.readTree(response.body());
    }

    static String key() {
        return "embedded-" + UUID.randomUUID();
    }

    static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static boolean listening(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 1_000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
