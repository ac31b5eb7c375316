package dev.once.example.demo;

import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.LongAdder;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The self-checking demo: several simulated clients drive the running service over real HTTP the way real clients
 * behave (retries after artificial timeouts, retries after success, bursts of concurrent duplicates of one key, keys
 * reused with another body), then it waits for the handlers and checks the effects ledger ({@code GET /ops/effects})
 * against what the clients were told. See {@link DemoReport} for the invariants.
 *
 * <p>It assumes it is the only writer while it runs: it compares the ledger's growth with its own acknowledgements.
 */
public final class Demo {

    /**
     * @param targets base URLs of one or more instances; requests go round-robin over them
     * @param clients simulated clients (threads), cycling through the demo users alice, bob and carol
     * @param operationsPerClient logical requests per client
     * @param settle how long to wait for the handlers to catch up before counting
     * @param patience how long one client keeps retrying one request (timeouts, 409s, an instance that is down)
     */
    public record Settings(List<URI> targets, int clients, int operationsPerClient, long seed, Duration settle,
                           Duration patience) {

        public static Settings against(List<URI> targets) {
            return new Settings(targets, 6, 50, 7, Duration.ofMinutes(2), Duration.ofSeconds(90));
        }

        public Settings withLoad(int clientCount, int perClient) {
            return new Settings(targets, clientCount, perClient, seed, settle, patience);
        }

        public Settings withSeed(long newSeed) {
            return new Settings(targets, clients, operationsPerClient, newSeed, settle, patience);
        }

        public Settings withPatience(Duration newPatience) {
            return new Settings(targets, clients, operationsPerClient, seed, settle, newPatience);
        }
    }

    enum Kind { ACCOUNT, FILE, COMPLETE, TASK }

    enum Style { PLAIN, RETRY_AFTER_SUCCESS, TIMEOUT_THEN_RETRY, CONCURRENT_DUPLICATES, REUSE_WITH_OTHER_BODY }

    /** A resource some client was told exists, and who may read it. */
    record Acknowledged(String path, String owner) {
    }

    private static final String[] USERS = {"alice", "bob", "carol"};
    private static final String OPS = "ops";
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    private final Settings settings;
    private final DemoStats stats = new DemoStats();
    private final DemoClient client;
    private final JsonMapper json = JsonMapper.builder().build();
    private final Map<Kind, LongAdder> acknowledged = new LinkedHashMap<>();
    private final ConcurrentLinkedQueue<Acknowledged> resources = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
    private final ExecutorService bursts = Executors.newCachedThreadPool();

    private Demo(Settings settings) {
        this.settings = settings;
        this.client = new DemoClient(HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build(), settings.targets(), stats);
        for (Kind kind : Kind.values()) {
            acknowledged.put(kind, new LongAdder());
        }
    }

    /**
     * The demo as a plain client of running instances: {@code examples/reference-service/run demo --targets
     * http://a:8080,http://b:8080 [--clients 6] [--operations 50]}. Exits 0 when every invariant held, 1 when one
     * broke, 2 for bad arguments.
     */
    public static void main(String[] args) {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            options.put(args[i], args[i + 1]);
        }
        if (args.length % 2 != 0 || !options.containsKey("--targets")
                || !Set.of("--targets", "--clients", "--operations").containsAll(options.keySet())) {
            System.err.println("usage: demo --targets http://host:8080[,http://host2:8080] [--clients N] [--operations N]");
            System.exit(2);
        }
        List<URI> targets = java.util.Arrays.stream(options.get("--targets").split(",")).map(String::trim)
                .map(URI::create).toList();
        DemoReport report = run(Settings.against(targets).withLoad(Integer.parseInt(options.getOrDefault("--clients", "6")),
                Integer.parseInt(options.getOrDefault("--operations", "50"))));
        System.out.println(report.table());
        System.exit(report.passed() ? 0 : 1);
    }

    /** Runs the demo against running instances and returns its report; it never throws for a broken invariant. */
    public static DemoReport run(Settings settings) {
        Demo demo = new Demo(settings);
        try {
            return demo.run();
        } finally {
            demo.bursts.shutdownNow();
        }
    }

    private DemoReport run() {
        JsonNode before = settle(); // count from a quiet system: events of earlier requests are handled first
        ExecutorService clients = Executors.newFixedThreadPool(settings.clients());
        try {
            List<CompletableFuture<Void>> running = new ArrayList<>();
            for (int c = 0; c < settings.clients(); c++) {
                String user = USERS[c % USERS.length];
                Random random = new Random(settings.seed() * 31 + c);
                running.add(CompletableFuture.runAsync(() -> clientLoop(user, random), clients));
            }
            CompletableFuture.allOf(running.toArray(CompletableFuture[]::new)).join();
        } finally {
            clients.shutdownNow();
        }
        readBack();
        JsonNode after = settle();
        return report(before, after);
    }

    private void clientLoop(String user, Random random) {
        List<String> myFiles = new ArrayList<>();
        for (int i = 0; i < settings.operationsPerClient(); i++) {
            Kind kind = pickKind(random, myFiles);
            Style style = Style.values()[weighted(random, 45, 15, 15, 12, 13)];
            try {
                operation(user, kind, style, random, myFiles);
            } catch (RuntimeException e) {
                failures.add(kind + " by " + user + " threw " + e);
            }
        }
    }

    private static Kind pickKind(Random random, List<String> myFiles) {
        Kind kind = Kind.values()[weighted(random, 40, 20, 15, 25)];
        return kind == Kind.COMPLETE && myFiles.isEmpty() ? Kind.FILE : kind;
    }

    private void operation(String user, Kind kind, Style style, Random random, List<String> myFiles) {
        String key = "demo-" + UUID.randomUUID();
        String path = kind == Kind.COMPLETE ? "/files/" + myFiles.remove(random.nextInt(myFiles.size())) + "/complete"
                : "/" + (kind == Kind.ACCOUNT ? "accounts" : kind == Kind.FILE ? "files" : "tasks");
        String body = body(kind, random);
        List<DemoClient.Answer> answers = new ArrayList<>();
        if (style == Style.TIMEOUT_THEN_RETRY) {
            // a client with a far too short timeout gives up while the server may still be working, then retries
            client.post(user, path, key, body, Duration.ofMillis(1 + random.nextInt(20)));
            answers.add(untilFinal(user, path, key, body));
        } else if (style == Style.CONCURRENT_DUPLICATES) {
            stats.concurrentBursts.increment();
            List<CompletableFuture<DemoClient.Answer>> burst = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                burst.add(CompletableFuture.supplyAsync(() -> untilFinal(user, path, key, body), bursts));
            }
            burst.forEach(f -> answers.add(f.join()));
        } else {
            answers.add(untilFinal(user, path, key, body));
        }
        if (style == Style.RETRY_AFTER_SUCCESS) {
            DemoClient.Answer again = untilFinal(user, path, key, body);
            if (!again.replayed()) {
                failures.add(kind + " " + key + ": a retry after success was not a replay (" + again.status() + ")");
            }
            answers.add(again);
        }
        Set<String> ids = new HashSet<>();
        for (DemoClient.Answer answer : answers) {
            if (answer.status() != expectedStatus(kind)) {
                if (retryable(answer)) {
                    stats.unresolved.increment();
                }
                failures.add(kind + " " + key + " ended with " + answer.status() + " " + answer.body());
                return;
            }
            ids.add(id(kind, answer.body()));
        }
        if (ids.size() != 1) {
            stats.inconsistentReplays.increment();
            failures.add(kind + " " + key + " answered with different resources: " + ids);
        }
        String id = ids.iterator().next();
        acknowledged.get(kind).increment();
        if (kind == Kind.FILE) {
            myFiles.add(id);
        }
        if (kind != Kind.COMPLETE) {
            resources.add(new Acknowledged(path + "/" + id, user));
        }
        if (style == Style.REUSE_WITH_OTHER_BODY) {
            stats.reuseAttempts.increment();
            String otherBody = kind == Kind.COMPLETE ? "{\"note\":\"again\"}" : body(kind, random);
            DemoClient.Answer reused = untilFinal(user, path, key, otherBody);
            if (reused.status() == 422 && reused.body().contains("IDEMPOTENCY_KEY_CONFLICT")) {
                stats.conflicts422.increment();
            } else {
                failures.add(kind + " " + key + ": reused with another body answered " + reused.status());
            }
        }
    }

    /** Sends until the answer is final: no answer, 409 or 503 is retried with the same key and body. */
    private DemoClient.Answer untilFinal(String user, String path, String key, String body) {
        long deadline = System.nanoTime() + settings.patience().toNanos();
        while (true) {
            DemoClient.Answer answer = client.post(user, path, key, body, REQUEST_TIMEOUT);
            if (!retryable(answer) || System.nanoTime() > deadline) {
                return answer;
            }
            backOff(answer);
        }
    }

    /** What a well-behaved client retries with the same key: no answer, 409 in progress, 502/503/504. */
    private static boolean retryable(DemoClient.Answer answer) {
        int status = answer.status();
        return answer.timedOut() || status == 409 || status == 502 || status == 503 || status == 504;
    }

    /** A GET, retried while no instance answers (one may be down: the clients of a deployment keep going). */
    private DemoClient.Answer reachable(String user, String path) {
        long deadline = System.nanoTime() + settings.patience().toNanos();
        while (true) {
            DemoClient.Answer answer = client.get(user, path);
            if ((!answer.timedOut() && answer.status() != 503) || System.nanoTime() > deadline) {
                return answer;
            }
            backOff(answer);
        }
    }

    /** Honours Retry-After, capped at 200 ms so the demo stays quick. */
    private static void backOff(DemoClient.Answer answer) {
        long millis = answer.retryAfter().map(s -> Long.parseLong(s.trim()) * 1000).orElse(50L);
        try {
            Thread.sleep(Math.min(Math.max(millis, 20), 200));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Every acknowledged resource reads back for its owner, and never for a user of another tenant. */
    private void readBack() {
        int n = 0;
        for (Acknowledged resource : resources) {
            DemoClient.Answer mine = reachable(resource.owner(), resource.path());
            if (mine.status() != 200) {
                failures.add("acknowledged " + resource.path() + " reads back as " + mine.status());
            }
            if (n++ % 4 == 0) {
                String stranger = "carol".equals(resource.owner()) ? "alice" : "carol";
                DemoClient.Answer theirs = reachable(stranger, resource.path());
                if (theirs.status() != 404) {
                    stats.crossTenantLeaks.increment();
                    failures.add(stranger + " reads " + resource.owner() + "'s " + resource.path() + ": " + theirs.status());
                }
            }
        }
    }

    /** Waits until every committed event was handled by each handler and the outbox is empty, or {@code settle}. */
    private JsonNode settle() {
        long deadline = System.nanoTime() + settings.settle().toNanos();
        JsonNode ledger = ledger();
        while (!quiet(ledger) && System.nanoTime() < deadline) {
            try {
                Thread.sleep(250);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            ledger = ledger();
        }
        return ledger;
    }

    private static boolean quiet(JsonNode ledger) {
        if (ledger.path("outbox").path("pending").asLong() != 0) {
            return false;
        }
        for (JsonNode handler : ledger.path("handlers")) {
            if (handler.path("events_unhandled").asLong() != 0) {
                return false;
            }
        }
        return ledger.path("resources").path("tasks").asLong() == ledger.path("resources").path("tasks_done").asLong();
    }

    private JsonNode ledger() {
        long deadline = System.nanoTime() + settings.patience().toNanos();
        DemoClient.Answer answer = reachable(OPS, "/ops/effects");
        while (answer.status() >= 500 && System.nanoTime() < deadline) { // e.g. its database is restarting
            backOff(answer);
            answer = reachable(OPS, "/ops/effects");
        }
        if (answer.status() != 200) {
            throw new IllegalStateException("GET /ops/effects answered " + answer.status() + " " + answer.body());
        }
        return json.readTree(answer.body());
    }

    private DemoReport report(JsonNode before, JsonNode after) {
        List<String> found = new ArrayList<>();
        found.addAll(failures);
        long duplicates = stats.inconsistentReplays.sum();
        long lost = 0;
        long accounts = acknowledged.get(Kind.ACCOUNT).sum();
        long files = acknowledged.get(Kind.FILE).sum();
        long tasks = acknowledged.get(Kind.TASK).sum();
        Map<String, Long> expectedRows = new LinkedHashMap<>();
        expectedRows.put("accounts", accounts);
        expectedRows.put("files", files);
        expectedRows.put("files_on_disk", files);
        expectedRows.put("files_completed", acknowledged.get(Kind.COMPLETE).sum());
        expectedRows.put("tasks", tasks);
        expectedRows.put("tasks_done", tasks);
        for (Map.Entry<String, Long> row : expectedRows.entrySet()) {
            long grown = delta(before.path("resources"), after.path("resources"), row.getKey());
            if (grown != row.getValue()) {
                found.add(row.getKey() + " grew by " + grown + ", but " + row.getValue() + " were acknowledged");
                duplicates += Math.max(0, grown - row.getValue());
                lost += Math.max(0, row.getValue() - grown);
            }
        }
        Map<String, Long> effects = new LinkedHashMap<>();
        long absorbed = 0;
        for (JsonNode handler : after.path("handlers")) {
            String name = handler.path("handler").asString();
            JsonNode was = find(before.path("handlers"), name);
            long added = handler.path("effects").asLong() - was.path("effects").asLong();
            long distinct = handler.path("distinct_events").asLong() - was.path("distinct_events").asLong();
            long expected = "AccountCreated".equals(handler.path("event_type").asString()) ? accounts : tasks;
            effects.put(name, added);
            absorbed += handler.path("absorbed_attempts").asLong() - was.path("absorbed_attempts").asLong();
            if (added != distinct) {
                found.add(name + " produced " + added + " effects for " + distinct + " events");
                duplicates += added - distinct;
            }
            if (distinct != expected) {
                found.add(name + " handled " + distinct + " new events, expected " + expected);
                lost += Math.max(0, expected - distinct);
            }
            long unhandled = handler.path("events_unhandled").asLong();
            if (unhandled != 0) {
                found.add(name + " has " + unhandled + " committed events it never handled");
                lost += unhandled;
            }
        }
        long halfWritten = after.path("resources").path("orphan_events").asLong()
                + after.path("resources").path("rows_without_event").asLong();
        if (halfWritten != 0) {
            found.add(halfWritten + " half-written requests: events without their row, or rows without their event");
        }
        if (stats.conflicts422.sum() != stats.reuseAttempts.sum()) {
            found.add(stats.reuseAttempts.sum() - stats.conflicts422.sum() + " keys reused with another body were not refused");
        }
        long operations = (long) settings.clients() * settings.operationsPerClient();
        return new DemoReport(operations, stats.requests.sum(), accounts + files + tasks, stats.replayed.sum(),
                stats.inProgress409.sum(), stats.conflicts422.sum(), stats.timeouts.sum() + stats.ioErrors.sum(), stats.concurrentBursts.sum(),
                effects, absorbed, duplicates, lost, halfWritten, stats.crossTenantLeaks.sum(), List.copyOf(found));
    }

    private JsonNode find(JsonNode handlers, String name) {
        for (JsonNode handler : handlers) {
            if (name.equals(handler.path("handler").asString())) {
                return handler;
            }
        }
        return json.createObjectNode();
    }

    private static long delta(JsonNode before, JsonNode after, String field) {
        return after.path(field).asLong() - before.path(field).asLong();
    }

    private String body(Kind kind, Random random) {
        int n = random.nextInt(1_000_000);
        switch (kind) {
            case ACCOUNT:
                return "{\"name\":\"Customer " + n + "\",\"email\":\"customer" + n + "@example.com\"}";
            case FILE:
                // Distinct content per logical request: files are stored under their hash, and the ledger counts them.
                byte[] bytes = ("invoice " + n + " " + new UUID(random.nextLong(), random.nextLong()) + "\n")
                        .repeat(1 + random.nextInt(20)).getBytes();
                return "{\"name\":\"invoice-" + n + ".txt\",\"content_base64\":\""
                        + Base64.getEncoder().encodeToString(bytes) + "\"}";
            case COMPLETE:
                return "{}";
            default:
                return "{\"type\":\"render-report\",\"params\":{\"month\":" + (1 + random.nextInt(12)) + ",\"n\":" + n + "}}";
        }
    }

    private static int expectedStatus(Kind kind) {
        return kind == Kind.ACCOUNT || kind == Kind.FILE ? 201 : kind == Kind.COMPLETE ? 200 : 202;
    }

    private String id(Kind kind, String body) {
        JsonNode node = json.readTree(body);
        return (kind == Kind.TASK ? node.path("task_id") : node.path("id")).asString();
    }

    private static int weighted(Random random, int... weights) {
        int total = 0;
        for (int w : weights) {
            total += w;
        }
        int pick = random.nextInt(total);
        for (int i = 0; i < weights.length; i++) {
            pick -= weights[i];
            if (pick < 0) {
                return i;
            }
        }
        return weights.length - 1;
    }
}
