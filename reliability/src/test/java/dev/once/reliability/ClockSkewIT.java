package dev.once.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.test.TestDatabase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The database clock decides. Two instances of the guard's test application share one database; the JVM of one runs
 * an hour ahead (libfaketime, Debian's {@code faketime}, preloaded into it), and so does one of two {@code core}
 * processes. Leases, their reclaim, the TTL, {@code Retry-After} and {@code core idempotency stuck | diagnose} agree
 * exactly between the two, and retries spread over both run each key's work once. Were any of these decided by a
 * JVM's clock, the instance an hour ahead would see every lease lapsed and every record expired.
 */
@ExtendWith(SummaryWatcher.class)
class ClockSkewIT {

    static final Path LIBFAKETIME = Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1");
    static final String ROUTE = "/clock/accounts"; // lease 10 s, TTL 12 s (ClockController)
    static final JsonMapper JSON = JsonMapper.builder().build();
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    /** Kept after the run: each instance's log, for a failure's post-mortem. */
    static final Path logs = Path.of("target", "clock-skew");

    static GuardApp onTime;
    static GuardApp hourAhead;
    static JdbcTemplate jdbc;
    static final ExecutorService clients = Executors.newFixedThreadPool(8);

    @BeforeAll
    static void start() {
        Assumptions.assumeTrue(Files.isReadable(LIBFAKETIME), "needs libfaketime (Debian's faketime package), "
                + "which .ci/run installs");
        jdbc = new JdbcTemplate(db.dataSource());
        try {
            Files.createDirectories(logs);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        onTime = new GuardApp("on-time", false, "create").start();
        hourAhead = new GuardApp("hour-ahead", true, "none").start();
        Duration skew = Duration.between(onTime.jvmNow(), hourAhead.jvmNow());
        assertThat(skew).as("the second JVM's clock").isBetween(Duration.ofMinutes(59), Duration.ofMinutes(61));
    }

    @AfterAll
    static void stop() {
        clients.shutdownNow();
        if (hourAhead != null) {
            hourAhead.close();
        }
        if (onTime != null) {
            onTime.close();
        }
    }

    @Test
    void a_lease_its_retry_after_its_lapse_and_stuck_records_agree_between_instances_an_hour_apart() throws Exception {
        String key = "lease-" + UUID.randomUUID();
        // the instance an hour ahead claims and holds the key past its 10 s lease
        CompletableFuture<HttpResponse<String>> slow = CompletableFuture.supplyAsync(
                () -> hourAhead.post(key, 30_000), clients);
        await().atMost(Duration.ofSeconds(10)).until(() -> status(key).equals("processing"));

        long asked = System.nanoTime();
        HttpResponse<String> fromOnTime = onTime.post(key, 0);
        HttpResponse<String> fromAhead = hourAhead.post(key, 0);
        long apart = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - asked) + 1;
        assertThat(fromOnTime.statusCode()).isEqualTo(409);
        assertThat(fromAhead.statusCode()).isEqualTo(409);
        long retryOnTime = retryAfter(fromOnTime);
        long retryAhead = retryAfter(fromAhead);
        assertThat(retryOnTime).isBetween(1L, 10L);
        assertThat(retryAhead).isBetween(retryOnTime - apart, retryOnTime); // asked a moment later, never an hour off
        assertThat(stuck(key, false)).isEmpty();
        assertThat(stuck(key, true)).isEmpty();

        await().atMost(Duration.ofSeconds(20)).until(() -> leaseLapsed(key));
        long before = System.nanoTime();
        JsonNode seenOnTime = stuck(key, false).get(0);
        JsonNode seenAhead = stuck(key, true).get(0);
        // the two reads run one after the other (each a JVM of core's): the second ages by the time between them
        long between = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - before) + 1;
        for (String field : List.of("claimed_at", "locked_until", "attempts", "lease_lapsed")) {
            assertThat(seenAhead.get(field)).as(field).isEqualTo(seenOnTime.get(field));
        }
        assertThat(seenAhead.get("age_seconds").asLong()).isBetween(seenOnTime.get("age_seconds").asLong(),
                seenOnTime.get("age_seconds").asLong() + between);

        HttpResponse<String> reclaimed = onTime.post(key, 0); // after the lease lapsed by the database clock
        assertThat(reclaimed.statusCode()).as(reclaimed.body()).isEqualTo(201);
        HttpResponse<String> replay = hourAhead.post(key, 0); // within the reclaimed record's 12 s TTL
        assertThat(replay.body()).isEqualTo(reclaimed.body());
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        HttpResponse<String> superseded = slow.get(60, TimeUnit.SECONDS);
        assertThat(superseded.statusCode()).as("the slow claimant is fenced off").isEqualTo(409);
        assertThat(accounts(key)).isEqualTo(1);
        Summary.record(new Summary.Row("clock skew: lease, Retry-After, stuck", 1, 1, 0, 0, true,
                "instance and core an hour ahead agree: Retry-After " + retryOnTime + " s vs " + retryAhead + " s"));
    }

    @Test
    void the_ttl_is_decided_by_the_database_clock_for_both_instances_and_both_clis() {
        String key = "ttl-" + UUID.randomUUID();
        HttpResponse<String> created = onTime.post(key, 0);
        assertThat(created.statusCode()).isEqualTo(201);

        assertThat(diagnosis(key, false)).isEqualTo("replayable");
        assertThat(diagnosis(key, true)).isEqualTo("replayable");
        HttpResponse<String> replay = hourAhead.post(key, 0);
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");

        await().atMost(Duration.ofSeconds(30)).until(() -> expired(key)); // 12 s by the database clock
        assertThat(diagnosis(key, false)).isEqualTo("expired_reusable");
        assertThat(diagnosis(key, true)).isEqualTo("expired_reusable");
        HttpResponse<String> again = hourAhead.post(key, 0);
        assertThat(again.statusCode()).isEqualTo(201);
        assertThat(again.headers().firstValue("Idempotent-Replayed")).isEmpty(); // runs anew after the TTL
        assertThat(accounts(key)).isEqualTo(2);
    }

    @Test
    void retries_spread_over_both_instances_run_each_keys_work_once() throws Exception {
        List<String> keys = new ArrayList<>();
        List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
        for (int k = 0; k < 30; k++) {
            String key = "spread-" + k + "-" + UUID.randomUUID();
            keys.add(key);
            for (int attempt = 0; attempt < 6; attempt++) {
                GuardApp target = attempt % 2 == 0 ? onTime : hourAhead;
                long hold = attempt == 0 ? 300 : 0;
                sent.add(CompletableFuture.supplyAsync(() -> target.post(key, hold), clients));
            }
        }
        for (CompletableFuture<HttpResponse<String>> response : sent) {
            assertThat(response.get(60, TimeUnit.SECONDS).statusCode()).isIn(201, 409);
        }
        for (String key : keys) {
            assertThat(accounts(key)).as(key).isEqualTo(1);
            HttpResponse<String> last = (keys.indexOf(key) % 2 == 0 ? hourAhead : onTime).post(key, 0);
            assertThat(last.statusCode()).isEqualTo(201);
            assertThat(last.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        }
        Summary.record(new Summary.Row("clock skew: retries over both", sent.size(), 0, 0, 0, true,
                "30 keys, 6 attempts each, alternating instances an hour apart: one account per key"));
    }

    private static String status(String key) {
        List<String> status = jdbc.queryForList("SELECT status FROM idempotency_record WHERE idempotency_key = ?",
                String.class, key);
        return status.isEmpty() ? "" : status.get(0);
    }

    private static boolean leaseLapsed(String key) {
        return Boolean.TRUE.equals(jdbc.queryForObject(
                "SELECT locked_until <= now() FROM idempotency_record WHERE idempotency_key = ?", Boolean.class, key));
    }

    private static boolean expired(String key) {
        return Boolean.TRUE.equals(jdbc.queryForObject(
                "SELECT expires_at <= now() FROM idempotency_record WHERE idempotency_key = ?", Boolean.class, key));
    }

    private static long accounts(String key) {
        return jdbc.queryForObject("SELECT count(*) FROM account WHERE name = ?", Long.class, key);
    }

    private static long retryAfter(HttpResponse<String> response) {
        return Long.parseLong(response.headers().firstValue("Retry-After").orElseThrow());
    }

    /** {@code core idempotency stuck} for records claimed more than an hour ago or with a lapsed lease, for {@code key}. */
    private static List<JsonNode> stuck(String key, boolean hourAhead) {
        JsonNode all = JSON.readTree(core(hourAhead, "idempotency", "stuck", "--older-than", "1h", "--json"));
        List<JsonNode> found = new ArrayList<>();
        all.forEach(record -> {
            if (record.get("idempotency_key").asString().equals(key)) {
                found.add(record);
            }
        });
        return found;
    }

    private static String diagnosis(String key, boolean hourAhead) {
        return JSON.readTree(core(hourAhead, "idempotency", "diagnose", "--tenant-id", "acme", "--user-id", "alice",
                "--route", "POST " + ROUTE, "--idempotency-key", key, "--json")).get("diagnosis").asString();
    }

    /** Runs ops-cli's jar as an operator would, with its clock an hour ahead if asked; returns what it printed. */
    private static String core(boolean hourAhead, String... args) {
        List<String> command = new ArrayList<>(List.of(java(), "-XX:TieredStopAtLevel=1", "-jar",
                System.getProperty("once.reliability.cli-jar", "../ops-cli/target/once-ops-cli.jar")));
        command.addAll(List.of(args));
        command.addAll(List.of("--jdbc-url", db.jdbcUrl(), "--db-user", db.server().username(),
                "--db-password", db.server().password()));
        ProcessBuilder builder = new ProcessBuilder(command);
        if (hourAhead) {
            fakeClock(builder);
        }
        try {
            Path out = Files.createTempFile(logs, "core-", ".json");
            Process process = builder.redirectOutput(out.toFile()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                throw new IllegalStateException("core " + String.join(" ", args) + " failed: " + Files.readString(out));
            }
            return Files.readString(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * The JVM's clock runs an hour ahead; its monotonic clock, which timed waits use, stays true. Without
     * {@code FAKETIME_FORCE_MONOTONIC_FIX=0} libfaketime 0.9.10 shifts the JVM's monotonic condition-variable
     * deadlines too, so that every timed wait returns at once and the JVM's own threads spin (startup took minutes).
     */
    private static void fakeClock(ProcessBuilder builder) {
        builder.environment().put("LD_PRELOAD", LIBFAKETIME.toString());
        builder.environment().put("FAKETIME", "+1h");
        builder.environment().put("DONT_FAKE_MONOTONIC", "1");
        builder.environment().put("FAKETIME_FORCE_MONOTONIC_FIX", "0");
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** The guard's test application in a JVM of its own, on this class's schema. */
    static final class GuardApp implements AutoCloseable {

        private final String name;
        private final boolean hourAhead;
        private final String ddl;
        private final int port = Scenario.freePort();
        private Process process;

        GuardApp(String name, boolean hourAhead, String ddl) {
            this.name = name;
            this.hourAhead = hourAhead;
            this.ddl = ddl;
        }

        GuardApp start() {
            List<String> command = List.of(java(), "-Xmx256m", "-XX:TieredStopAtLevel=1",
                    "-cp", System.getProperty("java.class.path"), "dev.once.guard.app.GuardTestApplication",
                    "--spring.config.location=optional:classpath:/no-application-config/", // not the reference service's
                    "--server.port=" + port,
                    "--spring.datasource.url=" + db.jdbcUrl(),
                    "--spring.datasource.username=" + db.server().username(),
                    "--spring.datasource.password=" + db.server().password(),
                    "--spring.jpa.hibernate.ddl-auto=" + ddl,
                    "--spring.jpa.open-in-view=false",
                    "--spring.flyway.enabled=false",
                    "--once.outbox.relay.enabled=false",
                    "--once.dispatcher.enabled=false");
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(logs.resolve(name + ".log").toFile());
            if (hourAhead) {
                fakeClock(builder);
            }
            try {
                process = builder.start();
            } catch (IOException e) {
                throw new UncheckedIOException("Could not start " + name, e);
            }
            await(name + " answers").atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(250)).until(() -> {
                if (!process.isAlive()) {
                    throw new IllegalStateException(name + " exited with " + process.exitValue() + "; see " + logs);
                }
                try {
                    return send(HttpRequest.newBuilder(uri("/clock/now")).GET()).statusCode() == 200;
                } catch (UncheckedIOException notYet) {
                    return false;
                }
            });
            return this;
        }

        Instant jvmNow() {
            return Instant.parse(JSON.readTree(send(HttpRequest.newBuilder(uri("/clock/now")).GET()).body())
                    .get("now").asString());
        }

        HttpResponse<String> post(String key, long holdMillis) {
            String body = JSON.writeValueAsString(Map.of("name", key, "email", "clock@example.com"));
            return send(HttpRequest.newBuilder(uri(ROUTE)).header("Content-Type", "application/json")
                    .header("Idempotency-Key", key).header("X-Hold-Millis", Long.toString(holdMillis))
                    .POST(HttpRequest.BodyPublishers.ofString(body)));
        }

        private URI uri(String path) {
            return URI.create("http://127.0.0.1:" + port + path);
        }

        private static HttpResponse<String> send(HttpRequest.Builder request) {
            request.header("Authorization", "Basic " + Base64.getEncoder()
                    .encodeToString("alice:alice-pass".getBytes(StandardCharsets.UTF_8))).timeout(Duration.ofSeconds(60));
            try {
                return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void close() {
            if (process != null) {
                process.destroy();
                try {
                    if (!process.waitFor(30, TimeUnit.SECONDS)) {
                        process.destroyForcibly();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }
}
