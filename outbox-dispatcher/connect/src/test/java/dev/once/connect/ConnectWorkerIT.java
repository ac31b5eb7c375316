package dev.once.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.idempotency.OnceMigrations;
import dev.once.spi.SlotWatermarks;
import dev.once.test.ReplicationCleanup;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.test.TestSigning;
import dev.once.wire.WireFormat;
import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * A separate Kafka Connect worker, set up from docs/SCALING.md alone: {@code ConnectDistributed} in a JVM of its own,
 * whose classpath has Connect and not Debezium or Once, with Debezium's PostgreSQL connector and the once-connect plugin
 * this module packages (the {@code package} phase's directory of the plugin zip) each in a directory of
 * {@code plugin.path}, and {@code config.providers=file} for the shipped {@code ${file:...}} secrets. The connector is
 * the shipped configuration, submitted over the worker's REST API, connecting as a role with only the documented
 * grants. Every event arrives, signed; on a quiet outbox the slot follows the WAL within a few heartbeats; the
 * service's watermarks empty the outbox.
 */
class ConnectWorkerIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    static final HttpClient HTTP = HttpClient.newHttpClient();

    @Test
    void a_worker_set_up_from_the_docs_relays_every_event_and_its_slot_follows_a_quiet_outbox(@TempDir Path dir)
            throws Exception {
        OnceMigrations.migrate(db.dataSource());
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        ConnectorRole role = ConnectorRole.granted(jdbc, db.schema());
        String prefix = "w" + UUID.randomUUID().toString().substring(0, 8);
        String slot = ("worker_" + prefix + "_" + db.schema()).toLowerCase();
        ShippedConnector.createPublication(jdbc, db.schema(), slot);
        TestKafka.createTopic(prefix + ".order", 2);

        Map<String, String> config = new LinkedHashMap<>(ShippedConnector.config(db.server(), db.schema(), slot, prefix));
        TestKafka.createTopic(ShippedConnector.heartbeatTopic(config), 1);
        Path secrets = dir.resolve("once.properties");
        Files.writeString(secrets, "database.password=" + role.password() + "\nsigning." + TestSigning.KEY_ID + "="
                + TestSigning.SECRET + "\n");
        config.put("database.user", role.user());
        config.put("database.password", "${file:" + secrets + ":database.password}"); // as shipped
        config.remove("transforms.once.signing.key." + TestSigning.KEY_ID);
        config.put("transforms.once.signing.key." + TestSigning.KEY_ID, "${file:" + secrets + ":signing."
                + TestSigning.KEY_ID + "}");
        config.put("heartbeat.interval.ms", "1000");

        int port = freePort();
        Process worker = startWorker(dir, port);
        try (SlotWatermarks watermarks = new SlotWatermarks(db.dataSource(), slot,
                SlotWatermarks.Options.ofDefaults().withInterval(Duration.ofMillis(500)))) {
            watermarks.start();
            URI connectors = URI.create("http://127.0.0.1:" + port + "/connectors");
            await("the worker's REST API").atMost(Duration.ofSeconds(120)).ignoreExceptions().until(() -> {
                assertThat(worker.isAlive()).as("worker alive; see " + dir.resolve("worker.log")).isTrue();
                return HTTP.send(HttpRequest.newBuilder(connectors).build(), HttpResponse.BodyHandlers.ofString())
                        .statusCode() == 200;
            });
            String body = JsonMapper.builder().build().writeValueAsString(Map.of("name", "once-" + prefix,
                    "config", config));
            HttpResponse<String> created = HTTP.send(HttpRequest.newBuilder(connectors)
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
            URI status = URI.create(connectors + "/once-" + prefix + "/status");
            await("the connector's task running").atMost(Duration.ofSeconds(120)).until(() -> HTTP.send(
                    HttpRequest.newBuilder(status).build(), HttpResponse.BodyHandlers.ofString()).body()
                    .matches("(?s).*\"tasks\":\\[\\{[^]]*\"state\":\"RUNNING\".*"));

            jdbc.update("""
                    INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type,
                                              event_version, payload)
                    SELECT gen_random_uuid(), 'acme', 'alice', 'order', 'o-' || (n % 5), 'OrderPlaced', 1,
                           convert_to(jsonb_build_object('n', n)::text, 'UTF8')
                    FROM generate_series(1, 50) AS n ORDER BY n
                    """);
            assertThat(TestKafka.distinctHeaders(TestKafka.bootstrapServers(), prefix + ".order", WireFormat.EVENT_ID,
                    50)).hasSize(50);
            assertThat(TestKafka.distinctHeaders(TestKafka.bootstrapServers(), prefix + ".order",
                    WireFormat.SIGNATURE_KEY, 1)).containsExactly(TestSigning.KEY_ID);

            String written = jdbc.queryForObject("SELECT pg_current_wal_insert_lsn()::text", String.class);
            await("the slot past " + written + " on a quiet outbox").atMost(Duration.ofSeconds(60)).until(() ->
                    jdbc.queryForObject("SELECT confirmed_flush_lsn > CAST(? AS pg_lsn) FROM pg_replication_slots"
                            + " WHERE slot_name = ?", Boolean.class, written, slot));
            await("the outbox empty").atMost(Duration.ofSeconds(60)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM outbox_event", Long.class) == 0);
            HTTP.send(HttpRequest.newBuilder(URI.create(connectors + "/once-" + prefix)).DELETE().build(),
                    HttpResponse.BodyHandlers.discarding());
        } finally {
            worker.destroyForcibly();
            worker.waitFor(30, TimeUnit.SECONDS);
            ReplicationCleanup.drop(db.dataSource(), slot, slot);
        }
    }

    /**
     * {@code ConnectDistributed} on a classpath of Connect without Debezium and without Once, and a {@code plugin.path}
     * with Debezium's PostgreSQL connector (its jars from this build's classpath) and once-connect (the directory the
     * plugin zip is made of).
     */
    private static Process startWorker(Path dir, int port) throws IOException {
        Path plugins = dir.resolve("plugins");
        Path debezium = Files.createDirectories(plugins.resolve("debezium-connector-postgres"));
        List<String> classpath = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String file = Path.of(entry).getFileName().toString();
            if (file.startsWith("debezium-") || file.startsWith("postgresql-") || file.startsWith("protobuf-java-")) {
                Files.copy(Path.of(entry), debezium.resolve(file));
            } else if (!entry.contains("/dev/once/") && !file.startsWith("once-") && !file.endsWith("classes")) {
                classpath.add(entry);
            }
        }
        // this build's plugin: target may also hold the directory an earlier version's build left there
        java.util.regex.Matcher version = java.util.regex.Pattern.compile("<parent>.*?<version>([^<]+)</version>",
                java.util.regex.Pattern.DOTALL).matcher(Files.readString(Path.of("pom.xml")));
        if (!version.find()) {
            throw new IllegalStateException("pom.xml names no parent version");
        }
        Path built = Path.of("target", "once-connect-" + version.group(1) + "-plugin");
        if (!Files.isDirectory(built)) {
            throw new IllegalStateException("the plugin directory " + built + " is missing: run the package phase first");
        }
        Path onceConnect = built.resolve("once-connect");
        Path properties = dir.resolve("worker.properties");
        String group = "once-worker-" + UUID.randomUUID();
        Files.writeString(properties, String.join("\n",
                "bootstrap.servers=" + TestKafka.bootstrapServers(),
                "group.id=" + group,
                "listeners=http://127.0.0.1:" + port,
                "config.storage.topic=" + group + "-configs",
                "offset.storage.topic=" + group + "-offsets",
                "status.storage.topic=" + group + "-status",
                "config.storage.replication.factor=1",
                "offset.storage.replication.factor=1",
                "status.storage.replication.factor=1",
                "key.converter=org.apache.kafka.connect.storage.StringConverter",
                "value.converter=org.apache.kafka.connect.converters.ByteArrayConverter",
                "offset.flush.interval.ms=1000",
                "plugin.path=" + plugins.toAbsolutePath() + "," + onceConnect.getParent().toAbsolutePath(),
                "config.providers=file",
                "config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider",
                ""));
        Path logging = dir.resolve("logback.xml");
        Files.writeString(logging, """
                <configuration>
                  <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
                    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level %logger{36} - %msg%n</pattern></encoder>
                  </appender>
                  <logger name="org.apache.kafka.connect.runtime.Worker" level="INFO"/>
                  <root level="WARN"><appender-ref ref="OUT"/></root>
                </configuration>
                """);
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx384m",
                "-Dlogback.configurationFile=" + logging, "-cp", String.join(File.pathSeparator, classpath), "org.apache.kafka.connect.cli.ConnectDistributed",
                properties.toString());
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("worker.log").toFile())
                .start();
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
