package dev.once.test;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;

/**
 * A PgBouncer of the test's own, in transaction mode, in front of {@code server}: one pooled database that reaches
 * {@code database} with {@code schema} as its search path, as a service reaches PostgreSQL behind a transaction
 * pooler. Debian's {@code pgbouncer} package is enough; without it the test is skipped, saying so. (It refuses to run
 * as root, so as root it runs as {@code postgres}.)
 */
public final class PgBouncer implements AutoCloseable {

    static final String BINARY = "/usr/sbin/pgbouncer";

    private final Process process;
    private final Path dir;
    private final int port;
    private final String database;

    private PgBouncer(Process process, Path dir, int port, String database) {
        this.process = process;
        this.dir = dir;
        this.port = port;
        this.database = database;
    }

    /** Starts it and waits until it listens. */
    public static PgBouncer start(PostgresServer server, String schema) {
        Assumptions.assumeTrue(Files.isExecutable(Path.of(BINARY)), "PgBouncer is not installed at " + BINARY
                + " (Debian: apt-get install pgbouncer); the pooler test needs it");
        URI url = URI.create(server.jdbcUrl().substring("jdbc:".length()));
        String database = url.getPath().substring(1);
        try {
            Path dir = Files.createTempDirectory("pgbouncer", PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString("rwxrwxrwx")));
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
            int port = freePort();
            Path config = dir.resolve("pgbouncer.ini");
            Files.writeString(config, """
                    [databases]
                    pooled = host=%s port=%d dbname=%s user=%s password=%s connect_query='SET search_path TO %s'
                    [pgbouncer]
                    listen_addr = 127.0.0.1
                    listen_port = %d
                    unix_socket_dir =
                    auth_type = any
                    pool_mode = transaction
                    ignore_startup_parameters = extra_float_digits,search_path
                    max_client_conn = 200
                    default_pool_size = 20
                    logfile = %s
                    pidfile = %s
                    """.formatted(url.getHost(), url.getPort() < 0 ? 5432 : url.getPort(), database,
                    server.username(), server.password() == null ? "" : server.password(), schema, port,
                    dir.resolve("pgbouncer.log"), dir.resolve("pgbouncer.pid")));
            Files.setPosixFilePermissions(config, PosixFilePermissions.fromString("rw-rw-rw-"));
            List<String> command = new ArrayList<>(List.of(BINARY));
            if ("root".equals(System.getProperty("user.name"))) {
                command.addAll(List.of("-u", "postgres"));
            }
            command.add(config.toString());
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("stdout.log").toFile()).start();
            PgBouncer bouncer = new PgBouncer(process, dir, port, "pooled");
            await("PgBouncer listening on " + port).atMost(Duration.ofSeconds(30)).until(() -> {
                if (!process.isAlive()) {
                    throw new IllegalStateException("PgBouncer exited: " + Files.readString(dir.resolve("stdout.log")));
                }
                return listening(port);
            });
            return bouncer;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The pooled database's URL. Prepared statements are off: PgBouncer 1.18 does not keep them across the server
     * sessions a transaction pooler hands out.
     */
    public String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?prepareThreshold=0";
    }

    @Override
    public void close() {
        process.destroy();
        try {
            process.waitFor();
            try (var files = Files.list(dir)) {
                for (Path file : files.toList()) {
                    Files.deleteIfExists(file);
                }
            }
            Files.deleteIfExists(dir);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static boolean listening(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
