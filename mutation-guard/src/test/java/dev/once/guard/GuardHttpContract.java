package dev.once.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.guard.app.Probe;
import dev.once.test.TestDatabase;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * The HTTP contract of @Idempotent routes, over real HTTP, against a real PostgreSQL: one suite, run on each stack
 * (Spring MVC; WebFlux with JDBC work; WebFlux with R2DBC work) by a subclass that starts its test service.
 */
abstract class GuardHttpContract {

    static final ExecutorService clients = Executors.newFixedThreadPool(40, r -> {
        Thread thread = new Thread(r, "contract-client");
        thread.setDaemon(true);
        return thread;
    });
    static final JsonMapper JSON = JsonMapper.builder().build();
    static final String ADA = "{\"name\":\"Ada\",\"email\":\"ada@example.com\"}";

    @LocalServerPort
    int port;

    @Autowired
    Probe probe;

    @Autowired
    io.micrometer.core.instrument.MeterRegistry meters;

    Http http;
    JdbcTemplate jdbc;

    /** The database of the subclass's service. */
    abstract TestDatabase db();

    @BeforeEach
    void setUp() {
        http = new Http(port);
        jdbc = new JdbcTemplate(db().dataSource());
        probe.reset();
    }

    @Test
    void missing_key_is_400_problem_and_the_handler_does_not_run() {
        HttpResponse<String> response = http.post("/accounts", "alice", null, ADA);

        assertProblem(response, 400, "IDEMPOTENCY_KEY_MISSING");
        assertThat(probe.runs("create")).isZero();
    }

    @Test
    void malformed_keys_are_400_problems() {
        assertProblem(http.post("/accounts", "alice", "k".repeat(256), ADA), 400, "IDEMPOTENCY_KEY_INVALID");
        assertProblem(http.post("/accounts", "alice", "two words", ADA), 400, "IDEMPOTENCY_KEY_INVALID");
        assertProblem(http.post("/accounts", "alice", "\"unterminated", ADA), 400, "IDEMPOTENCY_KEY_INVALID");
        assertProblem(http.post("/accounts", "alice", "\"bad\\escape\"", ADA), 400, "IDEMPOTENCY_KEY_INVALID");
        HttpResponse<String> twice = http.post("/accounts", "alice", "one", ADA, "Idempotency-Key", "two");
        assertProblem(twice, 400, "IDEMPOTENCY_KEY_INVALID");
        assertThat(body(twice).get("detail").toString()).contains("appears 2 times");
        assertThat(probe.runs("create")).isZero();
    }

    @Test
    void a_repeat_replays_the_first_response_and_the_work_happens_once() {
        String key = UUID.randomUUID().toString();

        HttpResponse<String> first = http.post("/accounts", "alice", key, ADA);
        HttpResponse<String> second = http.post("/accounts", "alice", key, "{ \"email\" : \"ada@example.com\", \"name\": \"Ada\" }");

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(second.statusCode()).isEqualTo(201);
        assertThat(second.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(second.body()).isEqualTo(first.body());
        assertThat(second.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location")).isPresent();
        assertThat(second.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
        assertThat(probe.runs("create")).isEqualTo(1);
        String accountId = body(first).get("id").toString();
        assertThat(count("SELECT count(*) FROM account WHERE id = ?::uuid", accountId)).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM outbox_event WHERE aggregate_id = ?", accountId)).isEqualTo(1);
    }

    @Test
    void a_response_without_a_body_replays_as_the_same_status_without_a_body() {
        String key = UUID.randomUUID().toString();
        String upload = "/uploads/" + UUID.randomUUID() + "/confirmation";

        HttpResponse<String> first = http.post(upload, "alice", key, "{\"checksum\":\"sha256:ab12\"}");
        HttpResponse<String> second = http.post(upload, "alice", key, "{\"checksum\":\"sha256:ab12\"}");

        assertThat(first.statusCode()).isEqualTo(204);
        assertThat(second.statusCode()).isEqualTo(204);
        assertThat(second.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(first.body()).isEmpty();
        assertThat(second.body()).isEmpty();
        assertThat(second.headers().firstValue("Content-Type")).isEmpty();
        assertThat(second.headers().firstValue("Content-Length")).isEmpty(); // a 204 has none (RFC 9110, 8.6)
        assertThat(probe.runs("confirm-upload")).isEqualTo(1);
        assertThat(jdbc.queryForObject("SELECT status || ' ' || response_code FROM idempotency_record WHERE idempotency_key = ?",
                String.class, key)).isEqualTo("succeeded 204");
    }

    @Test
    void the_quoted_structured_field_form_names_the_same_key_as_the_bare_token() {
        String key = "k-" + UUID.randomUUID();

        http.post("/accounts", "alice", key, ADA);
        HttpResponse<String> quoted = http.post("/accounts", "alice", "\"" + key + "\"", ADA);

        assertThat(quoted.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(probe.runs("create")).isEqualTo(1);
    }

    @Test
    void the_same_key_with_another_body_is_422_conflict() {
        String key = UUID.randomUUID().toString();
        http.post("/accounts", "alice", key, ADA);

        HttpResponse<String> reused = http.post("/accounts", "alice", key, "{\"name\":\"Grace\",\"email\":\"g@example.com\"}");

        assertProblem(reused, 422, "IDEMPOTENCY_KEY_CONFLICT");
        assertThat(probe.runs("create")).isEqualTo(1);
    }

    @Test
    void the_same_key_and_body_on_another_resource_or_with_other_parameters_is_a_conflict_not_a_replay() {
        String key = UUID.randomUUID().toString();
        String note = "{\"text\":\"call back\"}";
        HttpResponse<String> first = http.post("/accounts/" + UUID.randomUUID() + "/notes", "alice", key, note);

        HttpResponse<String> otherAccount = http.post("/accounts/" + UUID.randomUUID() + "/notes", "alice", key, note);

        assertThat(first.statusCode()).isEqualTo(201);
        assertProblem(otherAccount, 422, "IDEMPOTENCY_KEY_CONFLICT");
        String path = "/accounts/" + UUID.randomUUID() + "/notes";
        String key2 = UUID.randomUUID().toString();
        assertThat(http.post(path + "?priority=high", "alice", key2, note).statusCode()).isEqualTo(201);
        assertProblem(http.post(path + "?priority=low", "alice", key2, note), 422, "IDEMPOTENCY_KEY_CONFLICT");
        assertThat(http.post(path + "?priority=high", "alice", key2, note).headers().firstValue("Idempotent-Replayed"))
                .hasValue("true");
        assertThat(probe.runs("notes")).isEqualTo(2);
    }

    @Test
    void while_the_first_request_runs_a_repeat_gets_409_with_retry_after() {
        String key = UUID.randomUUID().toString();
        probe.close();
        CompletableFuture<HttpResponse<String>> first = CompletableFuture.supplyAsync(
                () -> http.post("/accounts", "alice", key, ADA), clients);
        await().atMost(Duration.ofSeconds(20)).until(() -> probe.entered() == 1);

        HttpResponse<String> repeat = http.post("/accounts", "alice", key, ADA);

        assertProblem(repeat, 409, "IDEMPOTENCY_IN_PROGRESS");
        assertThat(Integer.parseInt(repeat.headers().firstValue("Retry-After").orElseThrow())).isBetween(1, 30);
        probe.open();
        assertThat(first.join().statusCode()).isEqualTo(201);
        assertThat(probe.runs("create")).isEqualTo(1);
    }

    @Test
    void a_waiting_route_holds_the_repeat_until_the_first_finishes_and_replays_it() {
        String key = UUID.randomUUID().toString();
        probe.close();
        CompletableFuture<HttpResponse<String>> first = CompletableFuture.supplyAsync(
                () -> http.post("/accounts/patient", "alice", key, ADA), clients);
        await().atMost(Duration.ofSeconds(20)).until(() -> probe.entered() == 1);
        CompletableFuture<HttpResponse<String>> repeat = CompletableFuture.supplyAsync(
                () -> http.post("/accounts/patient", "alice", key, ADA), clients);

        probe.open();

        assertThat(first.join().statusCode()).isEqualTo(201);
        assertThat(repeat.join().statusCode()).isEqualTo(201);
        assertThat(repeat.join().headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(repeat.join().body()).isEqualTo(first.join().body());
        assertThat(probe.runs("patient")).isEqualTo(1);
    }

    @Test
    void many_concurrent_requests_with_one_key_run_the_handler_once() {
        String key = UUID.randomUUID().toString();
        probe.close();
        List<CompletableFuture<HttpResponse<String>>> requests = new ArrayList<>();
        for (int i = 0; i < 36; i++) {
            requests.add(CompletableFuture.supplyAsync(() -> http.post("/accounts", "bob", key, ADA), clients));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> probe.entered() == 1);
        await().atMost(Duration.ofSeconds(30)).until(() -> requests.stream().filter(CompletableFuture::isDone).count() >= 35);
        probe.open();

        List<HttpResponse<String>> responses = requests.stream().map(CompletableFuture::join).toList();
        assertThat(responses).filteredOn(r -> r.statusCode() == 201).hasSize(1);
        assertThat(responses).filteredOn(r -> r.statusCode() == 409).hasSize(35);
        assertThat(probe.runs("create")).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM account WHERE tenant_id = 'acme' AND id = ?::uuid",
                body(responses.stream().filter(r -> r.statusCode() == 201).findFirst().orElseThrow()).get("id").toString()))
                .isEqualTo(1);
        assertThat(count("SELECT count(*) FROM idempotency_record WHERE idempotency_key = ?", key)).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM outbox_event o JOIN idempotency_record r ON r.outbox_event_id = o.id"
                + " WHERE r.idempotency_key = ?", key)).isEqualTo(1);
        HttpResponse<String> after = http.post("/accounts", "bob", key, ADA);
        assertThat(after.headers().firstValue("Idempotent-Replayed")).hasValue("true");
    }

    @Test
    void a_claimant_that_hangs_past_its_lease_is_superseded_and_leaves_no_partial_rows() {
        String key = UUID.randomUUID().toString();
        String name = "Ada " + key; // names this request's rows, the hung claimant's included
        String ada = "{\"name\":\"" + name + "\",\"email\":\"ada@example.com\"}";
        probe.close();
        CompletableFuture<HttpResponse<String>> hung = CompletableFuture.supplyAsync(
                () -> http.post("/accounts/short-lease", "alice", key, ada), clients);
        await().atMost(Duration.ofSeconds(20)).until(() -> probe.entered() == 1);

        HttpResponse<String> retry = await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200))
                .until(() -> http.post("/accounts/short-lease", "alice", key, ada), r -> r.statusCode() == 201);
        probe.open();

        HttpResponse<String> late = hung.join();
        assertProblem(late, 409, "IDEMPOTENCY_IN_PROGRESS");
        String accountId = body(retry).get("id").toString();
        assertThat(count("SELECT count(*) FROM account WHERE name = ?", name))
                .as("the hung claimant's account rolled back with its refused completion").isEqualTo(1);
        assertThat(count("SELECT count(*) FROM account WHERE name = ? AND id IN (SELECT CAST(aggregate_id AS uuid)"
                + " FROM outbox_event o JOIN idempotency_record r ON r.outbox_event_id = o.id WHERE r.idempotency_key = ?)",
                name, key)).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM outbox_event WHERE aggregate_id = ?", accountId)).isEqualTo(1);
        assertThat(jdbc.queryForObject("SELECT fencing_token FROM idempotency_record WHERE idempotency_key = ?", Long.class, key))
                .isEqualTo(2);
        HttpResponse<String> replay = http.post("/accounts/short-lease", "alice", key, ada);
        assertThat(replay.body()).isEqualTo(retry.body());
        assertThat(probe.runs("short-lease")).isEqualTo(2);
    }

    @Test
    void a_handler_that_throws_leaves_a_failed_record_no_rows_and_its_failure_replays() {
        String key = UUID.randomUUID().toString();
        long accountsBefore = count("SELECT count(*) FROM account");
        long eventsBefore = count("SELECT count(*) FROM outbox_event");

        HttpResponse<String> first = http.post("/accounts/failing", "alice", key, ADA);
        HttpResponse<String> repeat = http.post("/accounts/failing", "alice", key, ADA);

        assertProblem(first, 402, "PAYMENT_REQUIRED");
        assertThat(repeat.statusCode()).isEqualTo(402);
        assertThat(repeat.body()).isEqualTo(first.body());
        assertThat(repeat.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(probe.runs("failing")).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM account")).isEqualTo(accountsBefore);
        assertThat(count("SELECT count(*) FROM outbox_event")).isEqualTo(eventsBefore);
        assertThat(jdbc.queryForMap("SELECT status, response_code, outbox_event_id FROM idempotency_record WHERE idempotency_key = ?", key))
                .containsEntry("status", "failed").containsEntry("response_code", 402).containsEntry("outbox_event_id", null);
    }

    @Test
    void a_route_that_allows_retrying_failures_runs_again_and_succeeds_once() {
        String key = UUID.randomUUID().toString();
        probe.failuresLeft.set(1);

        HttpResponse<String> first = http.post("/accounts/flaky", "alice", key, ADA);
        HttpResponse<String> second = http.post("/accounts/flaky", "alice", key, ADA);
        HttpResponse<String> third = http.post("/accounts/flaky", "alice", key, ADA);

        assertProblem(first, 500, "INTERNAL_ERROR");
        assertThat(second.statusCode()).isEqualTo(201);
        assertThat(third.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(third.body()).isEqualTo(second.body());
        assertThat(probe.runs("flaky")).isEqualTo(2);
        assertThat(count("SELECT count(*) FROM outbox_event WHERE aggregate_id = ?", body(second).get("id").toString())).isEqualTo(1);
    }

    @Test
    void a_transient_503_is_not_stored_so_the_repeat_runs_again() {
        String key = UUID.randomUUID().toString();
        probe.failuresLeft.set(1);

        HttpResponse<String> first = http.post("/accounts/busy", "alice", key, ADA);
        HttpResponse<String> second = http.post("/accounts/busy", "alice", key, ADA);

        assertThat(first.statusCode()).isEqualTo(503);
        assertThat(second.statusCode()).isEqualTo(201);
        assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(probe.runs("busy")).isEqualTo(2);
    }

    @Test
    void the_same_key_from_another_user_or_tenant_is_independent_and_never_sees_the_response() {
        String key = UUID.randomUUID().toString();
        HttpResponse<String> alice = http.post("/accounts", "alice", key, ADA);

        HttpResponse<String> bob = http.post("/accounts", "bob", key, ADA);
        HttpResponse<String> carol = http.post("/accounts", "carol", key, ADA);

        assertThat(List.of(alice, bob, carol)).allSatisfy(r -> {
            assertThat(r.statusCode()).isEqualTo(201);
            assertThat(r.headers().firstValue("Idempotent-Replayed")).isEmpty();
        });
        assertThat(body(carol).get("tenant_id")).isEqualTo("globex");
        assertThat(body(bob).get("id")).isNotEqualTo(body(alice).get("id"));
        assertThat(probe.runs("create")).isEqualTo(3);
    }

    @Test
    void an_undeclared_route_is_untouched_even_with_a_key() {
        String key = UUID.randomUUID().toString();

        HttpResponse<String> first = http.post("/accounts/unguarded", "alice", key, ADA);
        HttpResponse<String> second = http.post("/accounts/unguarded", "alice", key, ADA);

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(second.statusCode()).isEqualTo(201);
        assertThat(second.body()).isNotEqualTo(first.body());
        assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(probe.runs("unguarded")).isEqualTo(2);
        assertThat(count("SELECT count(*) FROM idempotency_record WHERE idempotency_key = ?", key)).isZero();
    }

    @Test
    void safe_methods_are_never_guarded() {
        String id = body(http.post("/accounts", "alice", UUID.randomUUID().toString(), ADA)).get("id").toString();

        HttpResponse<String> read = http.get("/accounts/" + id, "alice", null);
        http.get("/accounts/" + id, "alice", "some-key");

        assertThat(read.statusCode()).isEqualTo(200);
        assertThat(probe.runs("read")).isEqualTo(2);
    }

    @Test
    void a_submitted_task_is_bound_and_a_retry_returns_the_same_task_id() {
        String key = UUID.randomUUID().toString();

        HttpResponse<String> first = http.post("/tasks", "alice", key, "{\"type\":\"report\",\"params\":{\"month\":11}}");
        HttpResponse<String> retry = http.post("/tasks", "alice", key, "{\"params\":{\"month\":11.0},\"type\":\"report\"}");

        assertThat(first.statusCode()).isEqualTo(202);
        assertThat(body(retry).get("task_id")).isEqualTo(body(first).get("task_id"));
        assertThat(probe.runs("tasks")).isEqualTo(1);
        assertThat(jdbc.queryForObject("SELECT task_id FROM idempotency_record WHERE idempotency_key = ?", String.class, key))
                .isEqualTo(body(first).get("task_id"));
    }

    @Test
    void the_outbox_row_and_the_bound_event_id_commit_together() {
        String key = UUID.randomUUID().toString();

        HttpResponse<String> created = http.post("/accounts", "alice", key, ADA);

        Map<String, Object> joined = jdbc.queryForMap("SELECT o.aggregate_id, o.event_type, o.tenant_id, o.actor_id"
                + " FROM idempotency_record r JOIN outbox_event o ON o.id = r.outbox_event_id WHERE r.idempotency_key = ?", key);
        assertThat(joined).containsEntry("aggregate_id", body(created).get("id")).containsEntry("event_type", "AccountCreated")
                .containsEntry("tenant_id", "acme").containsEntry("actor_id", "alice");
    }

    @Test
    void claims_are_counted_by_outcome_and_the_guard_is_timed() {
        String key = UUID.randomUUID().toString();
        double replayedBefore = claims("replayed");
        double conflictsBefore = claims("conflict");

        http.post("/accounts", "alice", key, ADA);
        http.post("/accounts", "alice", key, ADA);
        http.post("/accounts", "alice", key, "{\"name\":\"Other\"}");

        assertThat(claims("replayed")).isEqualTo(replayedBefore + 1);
        assertThat(claims("conflict")).isEqualTo(conflictsBefore + 1);
        assertThat(meters.get("once.idempotency.guard").tag("outcome", "claimed").timer().count()).isPositive();
    }

    private double claims(String outcome) {
        var counter = meters.find("once.idempotency.claims").tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void without_credentials_a_guarded_route_is_401() {
        assertThat(http.post("/accounts", null, UUID.randomUUID().toString(), ADA).statusCode()).isEqualTo(401);
    }

    protected long count(String sql, Object... args) {
        return jdbc.queryForObject(sql, Long.class, args);
    }

    @SuppressWarnings("unchecked")
    protected static Map<String, Object> body(HttpResponse<String> response) {
        return JSON.readValue(response.body(), Map.class);
    }

    protected static void assertProblem(HttpResponse<String> response, int status, String code) {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
                ct -> assertThat(ct).startsWith("application/problem+json"));
        assertThat(body(response)).containsEntry("code", code).containsEntry("status", status);
    }
}
