package dev.once.reliability;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A class's {@code main} in a JVM of its own, on this test's class path, for a test to kill with {@code kill -9}; its
 * standard output read line by line, so that the test waits for what it says.
 */
record ChildJvm(String name, Process process, List<String> lines) implements AutoCloseable {

    static ChildJvm start(Class<?> main, List<String> args) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                main.getName()));
        command.addAll(args);
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            List<String> lines = new CopyOnWriteArrayList<>();
            Thread reader = new Thread(() -> {
                try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line = in.readLine(); line != null; line = in.readLine()) {
                        lines.add(line);
                    }
                } catch (IOException e) {
                    // the process ended
                }
            }, main.getSimpleName() + "-output");
            reader.setDaemon(true);
            reader.start();
            return new ChildJvm(main.getSimpleName(), process, lines);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits until the JVM printed a line that starts with {@code line}; fails at once if it exited. */
    void await(String line) {
        org.awaitility.Awaitility.await("the " + name + " JVM to say " + line).atMost(Duration.ofSeconds(120))
                .until(() -> {
                    if (!process.isAlive()) {
                        throw new IllegalStateException("the " + name + " JVM exited: " + String.join("\n", lines));
                    }
                    return lines.stream().anyMatch(l -> l.startsWith(line));
                });
    }

    /** {@code kill -9}. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the " + name + " JVM survived SIGKILL");
        }
    }

    @Override
    public void close() throws InterruptedException {
        kill();
    }

    /** In the child: its {@code name=value} arguments. */
    static java.util.Map<String, String> arguments(String[] args) {
        java.util.Map<String, String> named = new java.util.HashMap<>();
        for (String arg : args) {
            named.put(arg.substring(0, arg.indexOf('=')), arg.substring(arg.indexOf('=') + 1));
        }
        return named;
    }

    /** In the child: a pool into the test's schema, from the arguments url, user, password and schema. */
    static com.zaxxer.hikari.HikariDataSource pool(java.util.Map<String, String> a, int size) {
        com.zaxxer.hikari.HikariConfig pool = new com.zaxxer.hikari.HikariConfig();
        pool.setJdbcUrl(a.get("url") + (a.get("url").contains("?") ? "&" : "?") + "currentSchema=" + a.get("schema"));
        pool.setUsername(a.get("user"));
        pool.setPassword(a.get("password"));
        pool.setMaximumPoolSize(size);
        return new com.zaxxer.hikari.HikariDataSource(pool);
    }
}
