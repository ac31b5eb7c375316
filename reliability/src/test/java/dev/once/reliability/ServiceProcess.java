package dev.once.reliability;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One reference service instance as a real, separate JVM: started from the service's runnable jar, killed with
 * SIGKILL ({@code kill -9}: no shutdown hook, no graceful close, connections cut mid-transaction) and started again
 * on the same port, so clients keep their target.
 */
final class ServiceProcess implements AutoCloseable {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private final String name;
    private final Map<String, String> properties;
    private final Path logs;
    private final int port;
    private List<String> jvmOptions = List.of("-Xmx384m", "-XX:TieredStopAtLevel=1"); // C1 only: starts fast
    private Path jar = serviceJar();
    private Process process;
    private int starts;
    private boolean suspended;

    ServiceProcess(String name, Map<String, String> properties, Path logs) {
        this.name = name;
        this.properties = properties;
        this.logs = logs;
        this.port = Scenario.freePort();
    }

    URI uri() {
        return URI.create("http://127.0.0.1:" + port);
    }

    String name() {
        return name;
    }

    /** JVM options for the next start (instead of the fast-starting defaults). */
    ServiceProcess withJvmOptions(String... options) {
        this.jvmOptions = List.of(options);
        return this;
    }

    /** The runnable jar of the next start: another version of the service, as a rolling deploy brings. */
    ServiceProcess withJar(Path runnableJar) {
        if (!Files.isRegularFile(runnableJar)) {
            throw new IllegalStateException(runnableJar + " is not a runnable jar of the reference service");
        }
        this.jar = runnableJar;
        return this;
    }

    /** Starts the JVM and waits until its health endpoint answers UP. */
    ServiceProcess start() {
        List<String> command = new ArrayList<>(List.of(javaBinary()));
        command.addAll(jvmOptions);
        command.addAll(List.of("-jar", jar.toString(), "--server.port=" + port));
        properties.forEach((key, value) -> command.add("--" + key + "=" + value));
        try {
            Files.createDirectories(logs);
            Path log = logs.resolve(name + "-" + (++starts) + ".log");
            process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        } catch (IOException e) {
            throw new UncheckedIOException("Could not start " + name, e);
        }
        await("instance " + name + " healthy").atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(250))
                .until(() -> {
                    if (!process.isAlive()) {
                        throw new IllegalStateException(name + " exited with " + process.exitValue() + "; see " + logs);
                    }
                    return healthy();
                });
        return this;
    }

    /** {@code kill -9}: the JVM ends at once, whatever it was doing. */
    void kill() {
        process.destroyForcibly(); // SIGKILL ends a suspended JVM too
        suspended = false;
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException(name + " survived SIGKILL");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * {@code kill -STOP}: the JVM stands still, mid-request and mid-relay, until {@link #resume} or {@link #kill}, so
     * that what it left in the database can be looked at before it is killed.
     */
    void suspend() {
        signal("STOP");
        suspended = true;
    }

    /** {@code kill -CONT}: a suspended JVM carries on. */
    void resume() {
        signal("CONT");
        suspended = false;
    }

    boolean suspended() {
        return suspended && alive();
    }

    private void signal(String signal) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    long pid() {
        return process.pid();
    }

    boolean alive() {
        return process != null && process.isAlive();
    }

    /** The CDC relay's state on this instance (RUNNING for the leader, STANDBY otherwise), read from its health. */
    String relayState() {
        String body = get("/actuator/health", "ops:ops-pass");
        int at = body.indexOf("\"onceOutboxRelay\"");
        if (at < 0) {
            return "UNKNOWN";
        }
        int state = body.indexOf("\"state\":\"", at);
        return state < 0 ? "UNKNOWN" : body.substring(state + 9, body.indexOf('"', state + 9));
    }

    private boolean healthy() {
        try {
            return get("/actuator/health", null).contains("\"status\":\"UP\"");
        } catch (RuntimeException e) {
            return false;
        }
    }

    private String get(String path, String credentials) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri().resolve(path)).timeout(Duration.ofSeconds(5)).GET();
        if (credentials != null) {
            request.header("Authorization", "Basic " + java.util.Base64.getEncoder().encodeToString(credentials.getBytes()));
        }
        try {
            return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The log of the current (or last) start. */
    Path log() {
        return logs.resolve(name + "-" + starts + ".log");
    }

    /** SIGTERM, as a deploy stops an instance: Spring Boot shuts down gracefully; SIGKILL after 30 s. */
    void stop() {
        close();
    }

    @Override
    public void close() {
        if (alive()) {
            if (suspended) {
                resume(); // a stopped JVM would not act on SIGTERM
            }
            process.destroy();
            try {
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }

    static Path serviceJar() {
        Path jar = Path.of(System.getProperty("once.reliability.service-jar",
                "../examples/reference-service/target/once-reference-service-exec.jar"));
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("Build the reference service first: " + jar + " is missing");
        }
        return jar;
    }

    private static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}
