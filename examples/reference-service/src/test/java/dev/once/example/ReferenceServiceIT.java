package dev.once.example;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.example.demo.Demo;
import dev.once.example.demo.DemoReport;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.wire.WireFormat;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowCallbackHandler;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The reference service end to end: two instances on one database and one Kafka broker, real HTTP, the relay and the
 * handlers running. The demo's invariants hold exactly; every guarded endpoint follows the HTTP contract; tenants
 * never see each other.
 */
class ReferenceServiceIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    @TempDir
    static Path dataDir;

    static final JsonMapper JSON = JsonMapper.builder().build();
    static ServiceInstances instances;
    static Http first;
    static Http second;
    static JdbcTemplate jdbc;

    @BeforeAll
    static void startTwoInstances() {
        instances = new ServiceInstances(db, dataDir);
        ConfigurableApplicationContext a = instances.start();
        ConfigurableApplicationContext b = instances.start();
        first = new Http(ServiceInstances.baseOf(a));
        second = new Http(ServiceInstances.baseOf(b));
        jdbc = new JdbcTemplate(db.dataSource());
    }

    @AfterAll
    static void stop() {
        instances.close();
    }

    @Test
    void the_demo_against_both_instances_loses_nothing_and_does_nothing_twice() {
        DemoReport report = Demo.run(Demo.Settings.against(List.of(first.base, second.base)).withLoad(4, 40));

        assertThat(report.failures()).isEmpty();
        assertThat(report.duplicates()).isZero();
        assertThat(report.lost()).isZero();
        assertThat(report.crossTenantLeaks()).isZero();
        assertThat(report.halfWritten()).isZero();
        assertThat(report.absorbedAttempts()).isZero(); // nothing crashed: the LEASED handler never re-sent
        assertThat(report.operations()).isEqualTo(160);
        assertThat(report.requests()).isGreaterThan(report.operations()); // retries, bursts and reuse happened
        assertThat(report.replayed()).isPositive();
        assertThat(report.conflicts422()).isPositive();
        assertThat(report.effects().get("account-projection")).isEqualTo(report.effects().get("welcome-email"));
        assertThat(report.passed()).isTrue();
    }

    @Test
    void creating_an_account_answers_201_with_its_location_and_its_name_email_and_tenant() {
        HttpResponse<String> created = first.post("carol", "/accounts", key(), account("Hedy"));

        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        JsonNode account = json(created);
        assertThat(created.headers().firstValue("Location")).contains("/accounts/" + account.path("id").asString());
        assertThat(account.path("name").asString()).isEqualTo("Hedy");
        assertThat(account.path("email").asString()).isEqualTo("hedy@example.com");
        assertThat(account.path("tenant_id").asString()).isEqualTo("globex");
        HttpResponse<String> atLocation = second.get("carol", created.headers().firstValue("Location").orElseThrow());
        assertThat(atLocation.statusCode()).isEqualTo(200);
        assertThat(json(atLocation)).isEqualTo(account);
    }

    /** One outbox row as the handlers and the topics see it. */
    record Event(String aggregateType, String eventType, int eventVersion, String tenantId, String actorId) {
    }

    static final String EVENTS_OF_AGGREGATE = """
            SELECT aggregate_type, event_type, event_version, tenant_id, actor_id
              FROM outbox_event
             WHERE aggregate_id = ?
             ORDER BY seq
            """;

    @Test
    void every_guarded_write_emits_its_v1_event_for_its_aggregate_and_the_file_events_reach_the_file_topic() {
        String accountId = id(created(first.post("bob", "/accounts", key(), account("Edsger"))));
        String fileId = id(created(first.post("bob", "/files", key(), file("notes.txt", "EWD"))));
        assertThat(second.post("bob", "/files/" + fileId + "/complete", key(), "{}").statusCode()).isEqualTo(200);
        String taskId = json(second.post("bob", "/tasks", key(), task("archive"))).path("task_id").asString();

        assertThat(events(accountId)).containsExactly(new Event("account", "AccountCreated", 1, "acme", "bob"));
        assertThat(events(fileId)).containsExactly(new Event("file", "FileStored", 1, "acme", "bob"),
                new Event("file", "FileUploadCompleted", 1, "acme", "bob"));
        assertThat(events(taskId)).containsExactly(new Event("task", "TaskSubmitted", 1, "acme", "bob"));
        // no handler here takes file events: their topic, keyed by the file's id, is where they show
        assertThat(published(instances.topicPrefix() + ".file", fileId, 2)).containsExactly(
                "FileStored v1 tenant acme", "FileUploadCompleted v1 tenant acme");
        // the account's and the task's reach their handlers (account-projection and task-runner; welcome-email)
        await().atMost(Duration.ofSeconds(60)).until(() -> handled(HANDLER_EFFECTS_OF, accountId, taskId) == 2
                && handled(EMAILS_OF, accountId, taskId) == 1);
    }

    static final String HANDLER_EFFECTS_OF = """
            SELECT count(*) FROM handler_effect e JOIN outbox_event o ON o.id = e.event_id WHERE o.aggregate_id IN (?, ?)
            """;
    static final String EMAILS_OF = """
            SELECT count(*) FROM outbound_email m JOIN outbox_event o ON o.id = m.event_id WHERE o.aggregate_id IN (?, ?)
            """;

    static long handled(String sql, String... aggregateIds) {
        return jdbc.queryForObject(sql, Long.class, (Object[]) aggregateIds);
    }

    static final String ACCOUNTS_PER_TENANT = """
            SELECT tenant_id, count(*) AS accounts FROM account GROUP BY tenant_id
            """;
    static final String PROJECTED_ACCOUNTS_PER_TENANT = """
            SELECT tenant_id, accounts FROM account_count
            """;

    @Test
    void the_account_projection_counts_per_tenant_the_accounts_created_in_that_tenant() {
        for (String user : List.of("alice", "carol", "bob", "carol", "alice")) { // acme 3, globex 2
            String key = key();
            created(first.post(user, "/accounts", key, account("Counted")));
            second.post(user, "/accounts", key, account("Counted")); // a retry: replayed, not counted again
        }

        await().atMost(Duration.ofSeconds(60)).untilAsserted(() ->
                assertThat(perTenant(PROJECTED_ACCOUNTS_PER_TENANT)).isEqualTo(perTenant(ACCOUNTS_PER_TENANT)));
        assertThat(perTenant(ACCOUNTS_PER_TENANT)).containsKeys("acme", "globex");
    }

    /** An endpoint, a valid body, another body, the table its work writes, and its success status. */
    record Endpoint(String path, String body, String otherBody, String table, int status) {
    }

    @Test
    void every_guarded_endpoint_refuses_while_in_progress_then_replays_and_refuses_another_body() throws Exception {
        String fileId = id(created(first.post("alice", "/files", key(), file("a.txt", "hello"))));
        List<Endpoint> endpoints = List.of(
                new Endpoint("/accounts", account("Ada"), account("Bob"), "account", 201),
                new Endpoint("/files", file("b.txt", "bytes"), file("b.txt", "other bytes"), "stored_file", 201),
                new Endpoint("/files/" + fileId + "/complete", "{}", "{\"note\":\"other\"}", "stored_file", 200),
                new Endpoint("/tasks", task("resize"), task("crop"), "task", 202));
        for (Endpoint endpoint : endpoints) {
            String key = key();
            HttpResponse<String> firstAnswer;
            try (Connection lock = db.dataSource().getConnection(); Statement sql = lock.createStatement()) {
                lock.setAutoCommit(false);
                sql.execute("LOCK TABLE " + endpoint.table() + " IN EXCLUSIVE MODE"); // the work blocks mid-transaction
                CompletableFuture<HttpResponse<String>> running =
                        CompletableFuture.supplyAsync(() -> first.post("alice", endpoint.path(), key, endpoint.body()));
                await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                        "SELECT count(*) FROM idempotency_record WHERE idempotency_key = ? AND status = 'processing'",
                        Long.class, key) == 1);

                HttpResponse<String> meanwhile = second.post("alice", endpoint.path(), key, endpoint.body());

                assertProblem(meanwhile, 409, "IDEMPOTENCY_IN_PROGRESS");
                assertThat(meanwhile.headers().firstValue("Retry-After")).isPresent();
                lock.rollback();
                firstAnswer = running.join();
            }
            assertThat(firstAnswer.statusCode()).as(endpoint.path()).isEqualTo(endpoint.status());

            HttpResponse<String> retry = second.post("alice", endpoint.path(), key, endpoint.body());
            assertThat(retry.statusCode()).isEqualTo(endpoint.status());
            assertThat(retry.body()).isEqualTo(firstAnswer.body());
            assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
            assertThat(retry.headers().firstValue("Location")).isEqualTo(firstAnswer.headers().firstValue("Location"));

            assertProblem(first.post("alice", endpoint.path(), key, endpoint.otherBody()), 422, "IDEMPOTENCY_KEY_CONFLICT");
            assertProblem(first.post("alice", endpoint.path(), null, endpoint.body()), 400, "IDEMPOTENCY_KEY_MISSING");
        }
    }

    @Test
    void a_submitted_task_keeps_its_task_id_on_retry_and_is_run_once() {
        String key = key();
        HttpResponse<String> submitted = first.post("bob", "/tasks", key, task("thumbnail"));
        HttpResponse<String> retried = second.post("bob", "/tasks", key, task("thumbnail"));

        assertThat(submitted.statusCode()).isEqualTo(202);
        String taskId = json(submitted).path("task_id").asString();
        assertThat(json(retried).path("task_id").asString()).isEqualTo(taskId);
        assertThat(jdbc.queryForObject("SELECT task_id FROM idempotency_record WHERE idempotency_key = ?", String.class, key))
                .isEqualTo(taskId);
        await().atMost(Duration.ofSeconds(60)).until(() -> "done".equals(json(first.get("bob", "/tasks/" + taskId))
                .path("state").asString()));
        assertThat(jdbc.queryForObject("SELECT count(*) FROM task WHERE id = ?", Long.class, taskId)).isOne();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM handler_effect e JOIN outbox_event o ON o.id = e.event_id "
                + "WHERE e.handler_key = 'task-runner' AND o.aggregate_id = ?", Long.class, taskId)).isOne();
    }

    @Test
    void a_retried_upload_writes_one_file_and_an_account_gets_one_welcome_email() throws Exception {
        String key = key();
        String body = file("report.pdf", "%PDF-1.7 ...");
        JsonNode stored = json(created(first.post("carol", "/files", key, body)));
        second.post("carol", "/files", key, body);
        first.post("carol", "/files", key, body);

        String sha256 = stored.path("sha256").asString();
        Path tenantFiles = dataDir.resolve("files").resolve("globex");
        try (Stream<Path> files = Files.list(tenantFiles)) {
            assertThat(files.map(p -> p.getFileName().toString()).filter(name -> name.startsWith(sha256)))
                    .as("one file, named by its content, no temporary left").containsExactly(sha256);
        }
        assertThat(Files.readString(tenantFiles.resolve(sha256))).isEqualTo("%PDF-1.7 ...");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM stored_file WHERE sha256 = ?", Long.class, sha256)).isOne();

        String accountKey = key();
        String accountId = id(created(first.post("carol", "/accounts", accountKey, account("Grace"))));
        second.post("carol", "/accounts", accountKey, account("Grace"));
        await().atMost(Duration.ofSeconds(60)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM outbound_email m JOIN outbox_event o ON o.id = m.event_id WHERE o.aggregate_id = ?",
                Long.class, accountId) == 1);
        assertThat(jdbc.queryForObject("SELECT derived_key FROM outbound_email m JOIN outbox_event o ON o.id = m.event_id "
                + "WHERE o.aggregate_id = ?", String.class, accountId)).endsWith(":welcome-email");
    }

    @Test
    void a_key_is_scoped_to_tenant_and_user_so_nobody_replays_another_users_response() {
        String key = key();
        HttpResponse<String> alices = first.post("alice", "/accounts", key, account("Ada"));
        HttpResponse<String> carols = first.post("carol", "/accounts", key, account("Ada"));
        HttpResponse<String> bobs = second.post("bob", "/accounts", key, account("Ada"));

        for (HttpResponse<String> own : List.of(carols, bobs)) {
            assertThat(own.statusCode()).isEqualTo(201);
            assertThat(own.headers().firstValue("Idempotent-Replayed")).isEmpty();
            assertThat(id(own)).isNotEqualTo(id(alices));
        }
        assertThat(json(carols).path("tenant_id").asString()).isEqualTo("globex");
        assertThat(json(bobs).path("tenant_id").asString()).isEqualTo("acme");
    }

    @Test
    void another_tenants_resources_read_as_missing() {
        String accountId = id(created(first.post("alice", "/accounts", key(), account("Ada"))));
        String taskId = json(first.post("alice", "/tasks", key(), task("export"))).path("task_id").asString();

        assertThat(first.get("bob", "/accounts/" + accountId).statusCode()).isEqualTo(200); // same tenant
        assertProblem(first.get("carol", "/accounts/" + accountId), 404, "NOT_FOUND");
        assertProblem(second.get("carol", "/tasks/" + taskId), 404, "NOT_FOUND");
        assertThat(json(first.get("carol", "/accounts"))).noneMatch(a -> a.path("tenant_id").asString().equals("acme"));
        assertProblem(first.post("carol", "/files/" + UUID.randomUUID() + "/complete", key(), "{}"), 404, "NOT_FOUND");
    }

    @Test
    void without_credentials_everything_but_health_is_401_and_ops_is_for_operators() {
        assertThat(first.post(null, "/accounts", key(), account("Ada")).statusCode()).isEqualTo(401);
        assertThat(first.get(null, "/accounts").statusCode()).isEqualTo(401);
        assertThat(first.get(null, "/ops/effects").statusCode()).isEqualTo(401);
        assertThat(first.get("alice", "/ops/effects").statusCode()).isEqualTo(403);
        assertThat(first.get("alice", "/actuator/prometheus").statusCode()).isEqualTo(403);
        assertThat(first.get("ops", "/ops/effects").statusCode()).isEqualTo(200);
        // ops is in no tenant: it can neither create nor read tenant resources
        assertProblem(first.post("ops", "/accounts", key(), account("Ada")), 403, "TENANT_UNRESOLVED");
        assertProblem(first.get("ops", "/accounts"), 403, "NO_TENANT");
    }

    @Test
    void the_console_is_for_its_viewer_and_operator_only() {
        assertThat(first.get(null, "/once/api/overview").statusCode()).isEqualTo(401);
        assertThat(first.get("alice", "/once/api/overview").statusCode()).isEqualTo(403);
        assertThat(json(first.get("viewer", "/once/api/overview")).path("outbox").has("pending")).isTrue();
        assertThat(json(first.get("ops", "/once/api/me")).path("operator").asBoolean()).isTrue();
        assertThat(json(first.get("viewer", "/once/api/me")).path("operator").asBoolean()).isFalse();
        assertThat(first.get("viewer", "/ops/effects").statusCode()).as("the console's viewer is no operator of the "
                + "service's own ops API").isEqualTo(403);
    }

    @Test
    void bad_input_is_a_problem_with_a_stable_code_and_writes_nothing() {
        long accounts = jdbc.queryForObject("SELECT count(*) FROM account", Long.class);

        assertThat(first.post("alice", "/accounts", key(), "{\"name\": ").statusCode()).isEqualTo(400);
        assertProblem(first.post("alice", "/accounts", key(), "{\"name\":\"Ada\",\"email\":\"not-an-email\"}"),
                400, "VALIDATION_FAILED");
        assertProblem(first.post("alice", "/files", key(), "{\"name\":\"x\",\"content_base64\":\"***\"}"),
                400, "VALIDATION_FAILED");
        assertProblem(first.post("alice", "/tasks", key(), "{\"type\":\"x\",\"params\":[1]}"), 400, "VALIDATION_FAILED");

        assertThat(jdbc.queryForObject("SELECT count(*) FROM account", Long.class)).isEqualTo(accounts);
    }

    @Test
    void health_shows_database_relay_and_dispatcher_and_prometheus_has_onces_metrics() {
        first.post("alice", "/accounts", key(), account("Metric"));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            JsonNode health = json(first.get(null, "/actuator/health"));
            assertThat(health.path("status").asString()).isEqualTo("UP");
            assertThat(health.path("components").path("db").path("status").asString()).isEqualTo("UP");
            assertThat(health.path("components").path("onceOutboxRelay").path("status").asString()).isEqualTo("UP");
            assertThat(health.path("components").path("onceDispatcher").path("status").asString()).isEqualTo("UP");
        });
        assertThat(first.get("ops", "/actuator/prometheus").body())
                .contains("once_idempotency_claims_total", "once_outbox_pending", "once_outbox_published_total");
        // the handlers run on whichever instance holds the event's partition
        await().atMost(Duration.ofSeconds(30)).until(() -> (first.get("ops", "/actuator/prometheus").body()
                + second.get("ops", "/actuator/prometheus").body()).contains("once_dispatcher_handled_total"));
    }

    @Test
    void every_metric_the_alert_rules_and_the_dashboard_name_is_one_the_service_exports() throws Exception {
        java.util.Set<String> named = new java.util.TreeSet<>();
        for (String file : List.of("monitoring/prometheus/once-rules.yml", "monitoring/grafana/once-dashboard.json")) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\b(once_[a-z_]+|kafka_consumer_[a-z_]+)\\b")
                    .matcher(Files.readString(Path.of("../..", file)));
            while (m.find()) {
                named.add(m.group(1));
            }
        }
        assertThat(named).as("the rules and the dashboard name metrics").hasSizeGreaterThan(10);
        first.post("alice", "/accounts", key(), account("Scraped"));
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            String scraped = first.get("ops", "/actuator/prometheus").body() + "\n"
                    + second.get("ops", "/actuator/prometheus").body();
            java.util.Set<String> exported = new java.util.HashSet<>();
            scraped.lines().filter(line -> !line.startsWith("#") && !line.isBlank())
                    .forEach(line -> exported.add(line.split("[{ ]", 2)[0]));
            assertThat(exported).containsAll(named);
        });
    }

    // -- helpers ------------------------------------------------------------------------------------------------

    static String key() {
        return "it-" + UUID.randomUUID();
    }

    static String account(String name) {
        return "{\"name\":\"" + name + "\",\"email\":\"" + name.toLowerCase() + "@example.com\"}";
    }

    static String file(String name, String content) {
        return "{\"name\":\"" + name + "\",\"content_base64\":\""
                + Base64.getEncoder().encodeToString(content.getBytes()) + "\"}";
    }

    static String task(String type) {
        return "{\"type\":\"" + type + "\",\"params\":{\"size\":64}}";
    }

    static HttpResponse<String> created(HttpResponse<String> response) {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
        return response;
    }

    static String id(HttpResponse<String> response) {
        return json(response).path("id").asString();
    }

    static JsonNode json(HttpResponse<String> response) {
        return JSON.readTree(response.body());
    }

    static List<Event> events(String aggregateId) {
        return jdbc.query(EVENTS_OF_AGGREGATE, (rs, i) -> new Event(rs.getString("aggregate_type"),
                rs.getString("event_type"), rs.getInt("event_version"), rs.getString("tenant_id"),
                rs.getString("actor_id")), aggregateId);
    }

    static Map<String, Long> perTenant(String sql) {
        Map<String, Long> counts = new TreeMap<>();
        jdbc.query(sql, (RowCallbackHandler) rs -> counts.put(rs.getString("tenant_id"), rs.getLong("accounts")));
        return counts;
    }

    /** The events on {@code topic} keyed {@code aggregateId}, as "type vN tenant t", once {@code expected} arrived. */
    static List<String> published(String topic, String aggregateId, int expected) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "it-reader-" + UUID.randomUUID());
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<String> events = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer =
                     new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(topic));
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    String event = header(record, WireFormat.EVENT_TYPE) + " v"
                            + header(record, WireFormat.EVENT_VERSION)
                            + " tenant " + header(record, WireFormat.TENANT_ID);
                    if (aggregateId.equals(record.key()) && !events.contains(event)) {
                        events.add(event); // the relay delivers at least once: a redelivery is not another event
                    }
                }
                return events.size() >= expected;
            });
        }
        return events;
    }

    static String header(ConsumerRecord<?, ?> record, String name) {
        Header header = record.headers().lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    }

    static void assertProblem(HttpResponse<String> response, int status, String code) {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
                type -> assertThat(type).startsWith("application/problem+json"));
        assertThat(json(response).path("code").asString()).isEqualTo(code);
    }

}
