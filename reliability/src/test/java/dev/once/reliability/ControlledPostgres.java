package dev.once.reliability;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;

/**
 * A PostgreSQL server the suite owns, so it can restart it: the machine's or a container's server can't be
 * restarted from a test. It is a real PostgreSQL (zonky's binaries) with {@code wal_level=logical}, fsync and
 * synchronous commit on, and its data directory kept across restarts, on the same port throughout.
 */
final class ControlledPostgres implements AutoCloseable {

    private final Path dataDirectory;
    private final int port = Scenario.freePort();
    private EmbeddedPostgres server;
    private HikariDataSource admin;
    private int restarts;

    ControlledPostgres(Path dataDirectory) {
        this.dataDirectory = dataDirectory;
        start();
    }

    String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
    }

    /** A small pool for the test's own queries; it reconnects by itself after a restart. */
    DataSource admin() {
        if (admin == null) {
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(jdbcUrl());
            config.setUsername("postgres");
            config.setMaximumPoolSize(2);
            config.setInitializationFailTimeout(-1);
            admin = new HikariDataSource(config);
        }
        return admin;
    }

    /**
     * Stops the server the hard way ({@code pg_ctl stop -m immediate}: every session cut, no checkpoint, crash
     * recovery at the next start, as after a power cut of the database host) and starts it again.
     */
    void restart() {
        stop();
        start();
        restarts++;
    }

    int restarts() {
        return restarts;
    }

    private void start() {
        try {
            server = EmbeddedPostgres.builder()
                    .setDataDirectory(dataDirectory)
                    .setCleanDataDirectory(false)
                    .setPort(port)
                    .setServerConfig("wal_level", "logical")
                    .setServerConfig("max_replication_slots", "10")
                    .setServerConfig("max_wal_senders", "10")
                    .setServerConfig("max_connections", "200")
                    .setServerConfig("fsync", "on")
                    .setServerConfig("synchronous_commit", "on")
                    .setRegisterShutdownHook(false)
                    .setPGStartupWait(java.time.Duration.ofSeconds(60)) // crash recovery
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("Could not start PostgreSQL on port " + port, e);
        }
    }

    /** SIGQUIT to the postmaster is PostgreSQL's immediate shutdown (what {@code pg_ctl stop -m immediate} sends). */
    private void stop() {
        try {
            long pid = Long.parseLong(Files.readAllLines(dataDirectory.resolve("postmaster.pid")).get(0).trim());
            ProcessHandle postmaster = ProcessHandle.of(pid).orElseThrow();
            Process signal = new ProcessBuilder("kill", "-QUIT", Long.toString(pid)).start();
            if (signal.waitFor() != 0) {
                throw new IllegalStateException("kill -QUIT " + pid + " failed");
            }
            postmaster.onExit().get(60, TimeUnit.SECONDS);
            server.close(); // the server is gone; this releases zonky's lock on the data directory
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("PostgreSQL did not stop", e);
        }
    }

    @Override
    public void close() {
        if (admin != null) {
            admin.close();
        }
        stop();
    }
}
