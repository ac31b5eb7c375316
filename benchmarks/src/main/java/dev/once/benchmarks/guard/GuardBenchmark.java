package dev.once.benchmarks.guard;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.benchmarks.Harness;
import dev.once.idempotency.OnceMigrations;
import dev.once.OnceDataSource;
import dev.once.outbox.OutboxEvent;
import dev.once.outbox.OutboxWriter;
import dev.once.test.PostgresServer;
import dev.once.test.TestDatabase;
import dev.once.test.TestPostgres;
import java.net.URI;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The guard's cost at the HTTP endpoint and the outbox's cost in the business transaction. Same run, alternating
 * rounds, 16 concurrent clients by default:
 * <ul>
 *   <li>POST unguarded (business row + outbox row) vs. guarded with fresh keys vs. guarded replays vs. the guard's
 *       store calls made without the guard (same statements: the floor of the guard's design);</li>
 *   <li>the business transaction alone vs. the same transaction plus one {@link OutboxWriter#append};</li>
 *   <li>the same endpoint on WebFlux, with its work in the guard's JDBC transaction and in an R2DBC transaction:
 *       unguarded vs. guarded with fresh keys vs. guarded replays, for each.</li>
 * </ul>
 * Options: {@code --clients 16 --rounds 3 --seconds 5 --only all|outbox|endpoint|webflux --variants fresh,replays --warmup 5}
 * ({@code --variants}, for profiling: the endpoint variants with one of these words in their names; {@code --warmup}:
 * untimed seconds per variant before the rounds, 30 by default).
 */
public final class GuardBenchmark {

    /** The guard's statements without the guard (BenchApp's store-only endpoint): the floor of its design. */
    private static final String FLOOR = "floor (store calls only)";

    /** Fresh keys on the same service started with {@code once.outbox.domain-events.enabled=false}. */
    private static final String NO_LISTENER = "guarded, fresh keys, domain events off";

    /**
     * Fresh keys on the same service with tracing on: Micrometer Tracing over OpenTelemetry as Boot configures it,
     * every request sampled, spans discarded (no exporter). Every other variant runs with no tracer at all.
     */
    private static final String TRACED = "guarded, fresh keys, tracing on";

    /** Boot's tracing autoconfiguration, left out of the services measured without a tracer. */
    private static final String TRACING_AUTOCONFIGURATION = String.join(",",
            "org.springframework.boot.micrometer.tracing.opentelemetry.autoconfigure.OpenTelemetryTracingAutoConfiguration",
            "org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration",
            "org.springframework.boot.micrometer.tracing.autoconfigure.NoopTracerAutoConfiguration");

    private GuardBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int clients = 16;
        int rounds = 3;
        long millis = 5_000;
        String only = "all";
        List<String> variants = List.of();
        // Steady state, not JIT warm-up: after one 5 s round the endpoint's rounds still climbed 2-3x for a minute
        // more (guarded 0.60-0.73x then, 0.51-0.62x warm; --warmup 5 reproduces the one-round warm-up).
        long warmup = 30_000;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--clients" -> clients = Integer.parseInt(args[i + 1]);
                case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
                case "--seconds" -> millis = Long.parseLong(args[i + 1]) * 1000;
                case "--only" -> only = args[i + 1];
                case "--variants" -> variants = List.of(args[i + 1].split(","));
                case "--warmup" -> warmup = Long.parseLong(args[i + 1]) * 1000;
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        PostgresServer server = TestPostgres.server();
        String schema = "bench_guard_" + Long.toHexString(System.nanoTime());
        execute(server, "CREATE SCHEMA " + schema);
        try {
            run(server, schema, new Load(clients, millis, rounds, warmup), only, variants);
        } finally {
            execute(server, "DROP SCHEMA " + schema + " CASCADE");
        }
    }

    /** How the variants are driven: client threads, round length, rounds, and the untimed warm-up of each. */
    record Load(int clients, long millis, int rounds, long warmupMillis) {
    }

    private static void run(PostgresServer server, String schema, Load load, String only, List<String> variants)
            throws Exception {
        try (HikariDataSource ds = TestDatabase.newDataSource(schema, load.clients() + 4, null)) {
            OnceMigrations.migrate(ds);
            new JdbcTemplate(ds).execute("CREATE TABLE bench_account (id uuid PRIMARY KEY, tenant_id text NOT NULL, name text NOT NULL)");
        }
        System.out.printf(Locale.ROOT, "guard benchmark on %s (%d clients, %d rounds x %d s, alternating)%n",
                server, load.clients(), load.rounds(), load.millis() / 1000);
        if (!only.equals("endpoint")) {
            outboxWritePath(schema, load);
        }
        if (only.equals("all") || only.equals("endpoint")) {
            endpoint(server, schema, load, variants);
        }
        if (only.equals("all") || only.equals("webflux")) {
            webflux(server, schema, load);
        }
    }

    private static void outboxWritePath(String schema, Load load) throws Exception {
        int clients = load.clients();
        try (HikariDataSource pool = TestDatabase.newDataSource(schema, clients + 1, null)) {
            // as a Spring Boot application has it: the pool wrapped by Once's autoconfiguration
            OnceDataSource ds = new OnceDataSource(pool);
            JdbcTemplate jdbc = new JdbcTemplate(ds);
            TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
            OutboxWriter outbox = OutboxWriter.create(ds);
            TransactionTemplate plainTx = new TransactionTemplate(new DataSourceTransactionManager(pool));
            JdbcTemplate plainJdbc = new JdbcTemplate(pool);
            OutboxWriter plainOutbox = OutboxWriter.create(pool);
            Harness.Operation alone = (t, seq) -> tx.executeWithoutResult(s ->
                    jdbc.update(BenchApp.INSERT_ACCOUNT, UUID.randomUUID(), "acme", "Ada"));
            Harness.Operation withOutbox = (t, seq) -> tx.executeWithoutResult(s -> appendAccount(jdbc, outbox));
            Harness.Operation atOnce = (t, seq) -> plainTx.executeWithoutResult(s -> appendAccount(plainJdbc, plainOutbox));
            String plain = "tx + outbox row, plain pool";
            // the payload column's type alone: the same row by plain SQL into outbox_event (bytea, as shipped) and into a
            // copy of it whose payload is jsonb (as before V6), so that only the column's parsing differs
            plainJdbc.execute("CREATE TABLE IF NOT EXISTS bench_outbox_jsonb (LIKE outbox_event INCLUDING ALL)");
            plainJdbc.execute("ALTER TABLE bench_outbox_jsonb ALTER COLUMN payload TYPE jsonb USING convert_from(payload, 'UTF8')::jsonb");
            Harness.Operation bytea = (t, seq) -> plainTx.executeWithoutResult(s -> rawRow(plainJdbc, false));
            Harness.Operation jsonb = (t, seq) -> plainTx.executeWithoutResult(s -> rawRow(plainJdbc, true));
            String byteaRow = "tx + raw row, bytea payload";
            String jsonbRow = "tx + raw row, jsonb payload";
            Map<String, Double> result = Harness.compare(Map.of("business tx alone", alone,
                            "business tx + outbox row", withOutbox, plain, atOnce, byteaRow, bytea, jsonbRow, jsonb),
                    List.of("business tx alone", "business tx + outbox row", plain, byteaRow, jsonbRow), clients,
                    load.millis(), load.rounds(), load.warmupMillis());
            print("outbox write path (JDBC, " + clients + " threads)", result, "business tx alone");
            System.out.printf(Locale.ROOT, "  %-40s %20.2fx%n", "bytea / jsonb payload column",
                    result.get(byteaRow) / result.get(jsonbRow));
        }
    }

    /** The outbox row as plain SQL, payload as bytes (outbox_event) or as JSON text cast to jsonb (the copy). */
    private static final String RAW_BYTEA = """
            INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version,
                                      payload, content_type, headers)
            VALUES (?, 'acme', 'bench', 'account', ?, 'AccountCreated', 1, ?, 'application/json', CAST('{}' AS jsonb))
            """;
    private static final String RAW_JSONB = """
            INSERT INTO bench_outbox_jsonb (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type,
                                            event_version, payload, content_type, headers)
            VALUES (?, 'acme', 'bench', 'account', ?, 'AccountCreated', 1, CAST(? AS jsonb), 'application/json',
                    CAST('{}' AS jsonb))
            """;

    /** The business row, then one outbox row (bytea, or jsonb), with the same ~60-byte JSON payload either way. */
    private static void rawRow(JdbcTemplate jdbc, boolean jsonb) {
        UUID id = UUID.randomUUID();
        jdbc.update(BenchApp.INSERT_ACCOUNT, id, "acme", "Ada");
        String payload = "{\"id\":\"" + id + "\",\"name\":\"Ada\"}";
        jdbc.update(jsonb ? RAW_JSONB : RAW_BYTEA, ps -> {
            ps.setObject(1, UUID.randomUUID());
            ps.setString(2, id.toString());
            if (jsonb) {
                ps.setString(3, payload);
            } else {
                ps.setBytes(3, payload.getBytes(StandardCharsets.UTF_8));
            }
        });
    }

    private static void appendAccount(JdbcTemplate jdbc, OutboxWriter outbox) {
        UUID id = UUID.randomUUID();
        jdbc.update(BenchApp.INSERT_ACCOUNT, id, "acme", "Ada");
        outbox.append(OutboxEvent.builder().tenantId("acme").actorId("bench").aggregate("account", id.toString())
                .type("AccountCreated", 1).payloadJson("{\"id\":\"" + id + "\",\"name\":\"Ada\"}").build());
    }

    private static void endpoint(PostgresServer server, String schema, Load load, List<String> variants)
            throws Exception {
        int clients = load.clients();
        ConfigurableApplicationContext app = app(server, schema, clients, true, false);
        // the same service without Once's domain-event listener, and with tracing, for on/off variants of the same run
        ConfigurableApplicationContext noListener = app(server, schema, clients, false, false);
        ConfigurableApplicationContext traced = app(server, schema, clients, true, true);
        try {
            measure(port(app), port(noListener), port(traced), load, variants);
        } finally {
            traced.close();
            noListener.close();
            app.close();
        }
    }

    /** The endpoint on WebFlux: unguarded, fresh keys and replays, with JDBC work and with R2DBC work. */
    private static void webflux(PostgresServer server, String schema, Load load) throws Exception {
        int clients = load.clients();
        String auth = "Basic " + Base64.getEncoder().encodeToString("bench:bench-pass".getBytes(StandardCharsets.UTF_8));
        byte[] bytes = "{\"name\":\"Ada\"}".getBytes(StandardCharsets.UTF_8);
        String run = Long.toHexString(System.nanoTime());
        Map<String, Harness.Operation> operations = new java.util.LinkedHashMap<>();
        List<ConfigurableApplicationContext> apps = new ArrayList<>();
        List<LoadClient> all = new ArrayList<>();
        try {
            for (String mode : List.of("jdbc", "r2dbc")) {
                Map<String, Object> properties = new java.util.HashMap<>(common(server, schema, clients));
                properties.put("spring.main.web-application-type", "reactive");
                properties.put("once.idempotency.reactive.transactions", mode);
                properties.put("once.idempotency.reactive.jdbc-threads", Integer.toString(clients + 4));
                properties.put("spring.autoconfigure.exclude", TRACING_AUTOCONFIGURATION);
                ConfigurableApplicationContext app = new SpringApplicationBuilder(
                        dev.once.benchmarks.guardflux.ReactiveBenchApp.class).properties(properties).run();
                apps.add(app);
                int port = port(app);
                int replayKeys = 256;
                for (int k = 0; k < replayKeys; k++) {
                    post(port, "/guarded/accounts", auth, mode + "-replay-" + run + "-" + k, "{\"name\":\"Ada\"}", 201);
                }
                LoadClient[] unguarded = clients(port, "/unguarded/accounts", auth, clients);
                LoadClient[] fresh = clients(port, "/guarded/accounts", auth, clients);
                LoadClient[] replays = clients(port, "/guarded/accounts", auth, clients);
                for (LoadClient[] group : List.of(unguarded, fresh, replays)) {
                    all.addAll(List.of(group));
                }
                operations.put(mode + ": unguarded", (t, seq) -> unguarded[t].post(null, bytes, 201));
                operations.put(mode + ": guarded, fresh keys", (t, seq) -> fresh[t].post(
                        mode + "-fresh-" + run + "-" + t + "-" + seq, bytes, 201));
                operations.put(mode + ": guarded, replays", (t, seq) -> replays[t].post(
                        mode + "-replay-" + run + "-" + (int) ((t * 7919L + seq) % replayKeys), bytes, 201));
            }
            Map<String, Double> result = Harness.compare(operations, new ArrayList<>(operations.keySet()), clients,
                    load.millis(), load.rounds(), load.warmupMillis());
            print("POST /accounts on WebFlux over HTTP (" + clients + " clients)", result, "jdbc: unguarded");
            for (String mode : List.of("jdbc", "r2dbc")) {
                double base = result.get(mode + ": unguarded");
                System.out.printf(Locale.ROOT, "  %-40s %11.2fx %7.2fx%n", mode + ": fresh, replays / its unguarded",
                        result.get(mode + ": guarded, fresh keys") / base, result.get(mode + ": guarded, replays") / base);
            }
        } finally {
            for (LoadClient client : all) {
                client.close();
            }
            for (ConfigurableApplicationContext app : apps) {
                app.close();
            }
        }
    }

    private static int port(ConfigurableApplicationContext app) {
        return ((WebServerApplicationContext) app).getWebServer().getPort();
    }

    private static ConfigurableApplicationContext app(PostgresServer server, String schema, int clients,
                                                      boolean domainEvents, boolean tracing) {
        Map<String, Object> properties = new java.util.HashMap<>(common(server, schema, clients));
        properties.put("server.tomcat.threads.max", Integer.toString(clients + 4));
        properties.put("once.outbox.domain-events.enabled", Boolean.toString(domainEvents));
        if (tracing) {
            properties.put("management.tracing.sampling.probability", "1.0");
        } else {
            properties.put("spring.autoconfigure.exclude", TRACING_AUTOCONFIGURATION);
        }
        return new SpringApplicationBuilder(BenchApp.class).properties(properties).run();
    }

    /** What every service under test is started with. */
    private static Map<String, Object> common(PostgresServer server, String schema, int clients) {
        return Map.of("server.port", "0",
                "spring.datasource.url", server.jdbcUrlForSchema(schema),
                "spring.datasource.username", server.username(),
                "spring.datasource.password", server.password(),
                "spring.datasource.hikari.maximum-pool-size", Integer.toString(clients + 4),
                "logging.level.root", "WARN",
                "once.outbox.relay.enabled", "false", // the endpoint is measured, not the relay
                "once.outbox.signing.mode", "off", // nothing is relayed or consumed here
                "spring.main.banner-mode", "off");
    }

    private static void measure(int port, int portWithout, int portTraced, Load load, List<String> variants)
            throws Exception {
        int clients = load.clients();
        String auth = "Basic " + Base64.getEncoder().encodeToString("bench:bench-pass".getBytes(StandardCharsets.UTF_8));
        String body = "{\"name\":\"Ada\"}";
        String run = Long.toHexString(System.nanoTime());
        int replayKeys = 256;
        for (int k = 0; k < replayKeys; k++) {
            post(port, "/guarded/accounts", auth, "replay-" + run + "-" + k, body, 201);
        }
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        LoadClient[] plainClients = clients(port, "/plain/accounts", auth, clients);
        LoadClient[] unguardedClients = clients(port, "/unguarded/accounts", auth, clients);
        LoadClient[] freshClients = clients(port, "/guarded/accounts", auth, clients);
        LoadClient[] replayClients = clients(port, "/guarded/accounts", auth, clients);
        LoadClient[] storeClients = clients(port, "/store-only/accounts", auth, clients);
        LoadClient[] withoutClients = clients(portWithout, "/guarded/accounts", auth, clients);
        LoadClient[] tracedClients = clients(portTraced, "/guarded/accounts", auth, clients);
        Harness.Operation plain = (t, seq) -> plainClients[t].post(null, bytes, 201);
        Harness.Operation unguarded = (t, seq) -> unguardedClients[t].post(null, bytes, 201);
        Harness.Operation fresh = (t, seq) -> freshClients[t].post("fresh-" + run + "-" + t + "-" + seq, bytes, 201);
        Harness.Operation replay = (t, seq) -> replayClients[t].post(
                "replay-" + run + "-" + (int) ((t * 7919L + seq) % replayKeys), bytes, 201);
        Harness.Operation storeOnly = (t, seq) -> storeClients[t].post("store-" + run + "-" + t + "-" + seq, bytes, 201);
        Harness.Operation without = (t, seq) -> withoutClients[t].post("off-" + run + "-" + t + "-" + seq, bytes, 201);
        Harness.Operation traced = (t, seq) -> tracedClients[t].post("traced-" + run + "-" + t + "-" + seq, bytes, 201);
        List<String> order = new ArrayList<>(List.of("no outbox row", "unguarded", "guarded, fresh keys",
                "guarded, replays", FLOOR, NO_LISTENER, TRACED));
        if (!variants.isEmpty()) { // for profiling one path: --variants unguarded,replays (names' first words)
            order.removeIf(name -> variants.stream().noneMatch(v -> List.of(name.split("[ ,]+")).contains(v)));
        }
        Map<String, Double> result = Harness.compare(
                Map.of("no outbox row", plain, "unguarded", unguarded, "guarded, fresh keys", fresh,
                        "guarded, replays", replay, FLOOR, storeOnly, NO_LISTENER, without, TRACED, traced),
                order, clients, load.millis(), load.rounds(), load.warmupMillis());
        print("POST /accounts over HTTP (" + clients + " clients)", result, "unguarded");
        if (result.containsKey(TRACED) && result.containsKey("guarded, fresh keys")) {
            System.out.printf(Locale.ROOT, "  %-40s %20.2fx%n", "tracing on / off (fresh keys)",
                    result.get(TRACED) / result.get("guarded, fresh keys"));
        }
        for (LoadClient[] group : List.of(plainClients, unguardedClients, freshClients, replayClients, storeClients,
                withoutClients, tracedClients)) {
            for (LoadClient client : group) {
                client.close();
            }
        }
    }

    private static LoadClient[] clients(int port, String path, String auth, int n) {
        LoadClient[] clients = new LoadClient[n];
        for (int i = 0; i < n; i++) {
            clients[i] = new LoadClient(port, path, auth);
        }
        return clients;
    }

    /** One POST with the JDK's client, to seed the replayed keys; the measured load goes through {@link LoadClient}. */
    private static void post(int port, String path, String auth, String key, String body, int expected) throws Exception {
        HttpURLConnection connection = (HttpURLConnection) URI.create("http://127.0.0.1:" + port + path).toURL().openConnection();
        connection.setRequestMethod("POST");
        connection.setDoOutput(true);
        connection.setRequestProperty("Authorization", auth);
        connection.setRequestProperty("Content-Type", "application/json");
        if (key != null) {
            connection.setRequestProperty("Idempotency-Key", key);
        }
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        connection.setFixedLengthStreamingMode(bytes.length);
        try (OutputStream out = connection.getOutputStream()) {
            out.write(bytes);
        }
        int status = connection.getResponseCode();
        try (InputStream in = status < 400 ? connection.getInputStream() : connection.getErrorStream()) {
            byte[] response = in == null ? new byte[0] : in.readAllBytes();
            if (status != expected) {
                throw new IllegalStateException(path + " answered " + status + ": " + new String(response, StandardCharsets.UTF_8));
            }
        }
    }

    private static void print(String title, Map<String, Double> result, String baseline) {
        System.out.println();
        System.out.println(title);
        System.out.printf(Locale.ROOT, "  %-40s %12s %8s%n", "variant", "ops/s", "ratio");
        double base = result.getOrDefault(baseline, Double.NaN);
        result.forEach((name, ops) -> System.out.printf(Locale.ROOT, "  %-40s %12.0f %7.2fx%n", name, ops, ops / base));
    }

    private static void execute(PostgresServer server, String sql) throws Exception {
        try (Connection c = DriverManager.getConnection(server.jdbcUrl(), server.username(), server.password());
             Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
