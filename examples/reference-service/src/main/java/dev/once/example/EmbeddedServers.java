package dev.once.example;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.boot.context.event.ApplicationPreparedEvent;
import org.springframework.boot.context.event.SpringApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * The embedded default: when {@code spring.datasource.url} is not set it starts PostgreSQL (zonky, with
 * {@code wal_level=logical} for the CDC relay, data kept under {@code <data-dir>/postgres} between runs), and when
 * {@code spring.kafka.bootstrap-servers} is not set Kafka's own KRaft server in this JVM ({@link EmbeddedKafka}, its
 * log kept under {@code <data-dir>/kafka}, on fixed ports). Both stop after the
 * application context closed. Configured servers ({@code SPRING_DATASOURCE_URL}, {@code ONCE_JDBC_URL},
 * {@code ONCE_KAFKA_BOOTSTRAP}, ...) always win.
 */
final class EmbeddedServers implements ApplicationListener<SpringApplicationEvent> {

    static final String POSTGRES_PORT = "once.embedded.postgres-port";
    static final String KAFKA_PORT = "once.embedded.kafka-port";
    static final String KAFKA_CONTROLLER_PORT = "once.embedded.kafka-controller-port";

    private static final Logger log = LoggerFactory.getLogger(EmbeddedServers.class);

    private EmbeddedPostgres postgres;
    private EmbeddedKafka kafka;

    @Override
    public void onApplicationEvent(SpringApplicationEvent event) {
        if (event instanceof ApplicationEnvironmentPreparedEvent prepared) {
            start(prepared.getEnvironment());
        } else if (event instanceof ApplicationPreparedEvent prepared) {
            // registered before every other bean, so destroyed after all of them: the relay and the consumers
            // stop while their servers are still there
            ((DefaultListableBeanFactory) prepared.getApplicationContext().getBeanFactory())
                    .registerDisposableBean("onceEmbeddedServers", this::stop);
        }
    }

    private void start(ConfigurableEnvironment environment) {
        Map<String, Object> found = new LinkedHashMap<>();
        Path dataDir = Path.of(environment.getProperty("once.reference.data-dir", ReferenceProperties.DATA_DIR))
                .toAbsolutePath();
        if (isBlank(environment.getProperty("spring.datasource.url"))) {
            int port = environment.getProperty(POSTGRES_PORT, Integer.class, 54320);
            postgres = startPostgres(dataDir.resolve("postgres"), port);
            found.put("spring.datasource.url", "jdbc:postgresql://localhost:" + postgres.getPort() + "/postgres");
            found.put("spring.datasource.username", "postgres");
            found.put("spring.datasource.password", "postgres");
            log.info("Embedded PostgreSQL at {} (user postgres, data in {})", found.get("spring.datasource.url"),
                    dataDir.resolve("postgres"));
        }
        if (isBlank(environment.getProperty("spring.kafka.bootstrap-servers"))) {
            int port = environment.getProperty(KAFKA_PORT, Integer.class, 59092);
            int controllerPort = environment.getProperty(KAFKA_CONTROLLER_PORT, Integer.class, 59093);
            kafka = startKafka(dataDir.resolve("kafka"), port, controllerPort);
            found.put("spring.kafka.bootstrap-servers", kafka.bootstrapServers());
            log.info("Embedded Kafka (KRaft) at {} (log in {})", kafka.bootstrapServers(), dataDir.resolve("kafka"));
        }
        if (!found.isEmpty()) {
            environment.getPropertySources().addFirst(new MapPropertySource("onceEmbeddedServers", found));
        }
    }

    private static EmbeddedPostgres startPostgres(Path dataDirectory, int port) {
        try {
            Files.createDirectories(dataDirectory);
            return EmbeddedPostgres.builder()
                    .setDataDirectory(dataDirectory)
                    .setCleanDataDirectory(false)
                    .setPort(port)
                    .setServerConfig("wal_level", "logical")
                    // zonky starts test servers with fsync and synchronous_commit off; this one keeps data
                    .setServerConfig("fsync", "on")
                    .setServerConfig("synchronous_commit", "on")
                    .setServerConfig("max_replication_slots", "10")
                    .setServerConfig("max_wal_senders", "10")
                    .setServerConfig("max_connections", "200")
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("Could not start the embedded PostgreSQL on port " + port + " (set "
                    + POSTGRES_PORT + ", or spring.datasource.url to use a running server)", e);
        }
    }

    private static EmbeddedKafka startKafka(Path logDirectory, int port, int controllerPort) {
        try {
            return EmbeddedKafka.start(logDirectory, port, controllerPort);
        } catch (Exception e) {
            throw new IllegalStateException("Could not start the embedded Kafka on ports " + port + " and "
                    + controllerPort + " with its log in " + logDirectory + " (set " + KAFKA_PORT + " and "
                    + KAFKA_CONTROLLER_PORT + ", or spring.kafka.bootstrap-servers to use a running broker)", e);
        }
    }

    private void stop() {
        if (kafka != null) {
            kafka.close();
            kafka = null;
        }
        if (postgres != null) {
            try {
                postgres.close();
            } catch (IOException e) {
                log.warn("Embedded PostgreSQL did not stop cleanly", e);
            }
            postgres = null;
        }
    }

    private static boolean isBlank(String value) {
        return value == null || value.isBlank();
    }
}
