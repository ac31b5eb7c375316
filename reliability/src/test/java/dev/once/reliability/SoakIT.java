package dev.once.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.test.TestDatabase;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The soak, on demand only ({@code reliability/run soak}, {@code -Donce.soak.minutes=10}): one service JVM under a
 * steady rate of account creations for N minutes, 5% of them sent twice (a duplicate) and every timeout, 409 or 503
 * retried with the same key. It reports throughput, p50/p99 latency, the service's heap after a full GC every 30 s
 * ({@code jcmd GC.run}, then Micrometer's heap in use), and the ledger: one account, one projection and one welcome
 * email per acknowledged request.
 */
@EnabledIfSystemProperty(named = "once.soak.minutes", matches = "\\d+")
@ExtendWith(SummaryWatcher.class)
class SoakIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(2);

    @TempDir
    static Path dataDir;

    static final int RATE_PER_SECOND = Integer.getInteger("once.soak.rate", 40);
    static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void a_steady_load_with_duplicates_and_retries_keeps_latency_and_heap_flat_and_the_ledger_exact() throws Exception {
        Duration length = Duration.ofMinutes(Long.getLong("once.soak.minutes"));
        try (Deployment deployment = new Deployment(db, dataDir, "cdc")) {
            ServiceProcess service = deployment.instance("soak").withJvmOptions("-Xmx512m").start(); // full JIT
            JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
            ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
            ConcurrentLinkedQueue<String> acknowledged = new ConcurrentLinkedQueue<>();
            List<String> heap = Collections.synchronizedList(new ArrayList<>());
            AtomicLong requests = new AtomicLong();
            AtomicLong duplicates = new AtomicLong();
            ExecutorService senders = Executors.newFixedThreadPool(64);
            ScheduledExecutorService clock = Executors.newScheduledThreadPool(2);
            AtomicInteger inFlight = new AtomicInteger();
            Random random = new Random(5);
            long start = System.nanoTime();
            Client client = new Client(service.uri(), senders, clock, latencies, requests, inFlight);
            clock.scheduleAtFixedRate(() -> {
                String key = "soak-" + UUID.randomUUID();
                client.submit(key, acknowledged);
                if (random.nextInt(100) < 5) {
                    duplicates.incrementAndGet();
                    client.submit(key, null); // the same request again: must replay, never create
                }
            }, 0, 1_000_000 / RATE_PER_SECOND, TimeUnit.MICROSECONDS);
            clock.scheduleAtFixedRate(() -> heap.add(heapAfterGc(service)), 30, 30, TimeUnit.SECONDS);
            await().atMost(length.plusMinutes(1)).until(() -> System.nanoTime() - start >= length.toNanos());
            client.stopSubmitting();
            await("every request answered").atMost(Duration.ofMinutes(3)).until(() -> inFlight.get() == 0);
            clock.shutdownNow();
            senders.shutdownNow();
            double seconds = (System.nanoTime() - start) / 1e9;
            await().atMost(Duration.ofMinutes(2)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM outbox_event WHERE published_at IS NULL", Long.class) == 0
                    && effects(jdbc, "handler_effect") >= acknowledged.size() && effects(jdbc, "outbound_email") >= acknowledged.size());

            List<Long> sorted = new ArrayList<>(latencies);
            Collections.sort(sorted);
            long accounts = jdbc.queryForObject("SELECT count(*) FROM account", Long.class);
            long lost = Math.max(0, acknowledged.size() - accounts);
            long duplicated = Math.max(0, accounts - acknowledged.size())
                    + effects(jdbc, "handler_effect") - distinct(jdbc, "handler_effect")
                    + effects(jdbc, "outbound_email") - distinct(jdbc, "outbound_email");
            String report = String.format("soak %s: %d requests (%d duplicates) in %.0f s = %.1f req/s; latency p50 %d ms, "
                            + "p99 %d ms; heap after GC every 30 s (MiB): %s; accounts %d for %d acknowledged; lost %d, "
                            + "duplicated %d%n", length, requests.get(), duplicates.get(), seconds, requests.get() / seconds,
                    percentile(sorted, 50), percentile(sorted, 99), heap, accounts, acknowledged.size(), lost, duplicated);
            System.out.print(report);
            Files.createDirectories(Path.of("target", "reliability"));
            Files.writeString(Path.of("target", "reliability", "soak.txt"), report);
            Summary.record(new Summary.Row("soak " + length.toMinutes() + " min, " + RATE_PER_SECOND + " req/s, 5% duplicates",
                    acknowledged.size(), duplicates.get(), lost, duplicated, lost == 0 && duplicated == 0,
                    "p50 " + percentile(sorted, 50) + " ms, p99 " + percentile(sorted, 99) + " ms, heap after GC " + heap));
            assertThat(lost).isZero();
            assertThat(duplicated).isZero();
        }
    }

    /**
     * The soak's clients: each logical request is sent, and a timeout, 409 or 503 is retried with the same key after
     * 100 ms (scheduled, not slept), for up to two minutes.
     */
    static final class Client {
        private final URI base;
        private final ExecutorService senders;
        private final ScheduledExecutorService clock;
        private final ConcurrentLinkedQueue<Long> latencies;
        private final AtomicLong requests;
        private final AtomicInteger inFlight;
        private volatile boolean submitting = true;

        Client(URI base, ExecutorService senders, ScheduledExecutorService clock, ConcurrentLinkedQueue<Long> latencies,
               AtomicLong requests, AtomicInteger inFlight) {
            this.base = base;
            this.senders = senders;
            this.clock = clock;
            this.latencies = latencies;
            this.requests = requests;
            this.inFlight = inFlight;
        }

        void submit(String key, ConcurrentLinkedQueue<String> acknowledged) {
            if (submitting) {
                inFlight.incrementAndGet();
                long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
                senders.submit(() -> attempt(key, acknowledged, deadline));
            }
        }

        void stopSubmitting() {
            submitting = false;
        }

        private void attempt(String key, ConcurrentLinkedQueue<String> acknowledged, long deadline) {
            String body = "{\"name\":\"Soak\",\"email\":\"" + key + "@example.com\"}";
            long begin = System.nanoTime();
            requests.incrementAndGet();
            int status;
            try {
                status = HTTP.send(HttpRequest.newBuilder(base.resolve("/accounts"))
                        .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
                        .header("Idempotency-Key", key)
                        .header("Authorization", "Basic " + Base64.getEncoder().encodeToString(
                                "alice:alice-pass".getBytes(StandardCharsets.UTF_8)))
                        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString())
                        .statusCode();
            } catch (IOException e) {
                status = 0;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                inFlight.decrementAndGet();
                return;
            }
            latencies.add((System.nanoTime() - begin) / 1_000_000);
            if (status == 201 && acknowledged != null) {
                acknowledged.add(key);
            }
            if (status == 201 || System.nanoTime() > deadline) {
                inFlight.decrementAndGet();
            } else {
                clock.schedule(() -> senders.submit(() -> attempt(key, acknowledged, deadline)), 100, TimeUnit.MILLISECONDS);
            }
        }
    }

    /** Runs a full GC in the service JVM ({@code jcmd GC.run}), then reads its heap in use: the live heap. */
    static String heapAfterGc(ServiceProcess service) {
        try {
            Process gc = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                    Long.toString(service.pid()), "GC.run").redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            gc.waitFor(30, TimeUnit.SECONDS);
            String body = HTTP.send(HttpRequest.newBuilder(service.uri().resolve("/actuator/metrics/jvm.memory.used?tag=area:heap"))
                    .header("Authorization", "Basic " + Base64.getEncoder().encodeToString("ops:ops-pass".getBytes()))
                    .GET().build(), HttpResponse.BodyHandlers.ofString()).body();
            Matcher value = Pattern.compile("\"value\":([0-9.E]+)").matcher(body);
            return value.find() ? Long.toString(Math.round(Double.parseDouble(value.group(1)) / (1024 * 1024))) : "?";
        } catch (IOException | RuntimeException e) {
            return "?";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "?";
        }
    }

    static long effects(JdbcTemplate jdbc, String table) {
        return jdbc.queryForObject("SELECT count(*) FROM " + table, Long.class);
    }

    static long distinct(JdbcTemplate jdbc, String table) {
        return jdbc.queryForObject("SELECT count(DISTINCT event_id) FROM " + table, Long.class);
    }

    static long percentile(List<Long> sorted, int p) {
        return sorted.isEmpty() ? 0 : sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p / 100.0 * sorted.size()) - 1));
    }
}
