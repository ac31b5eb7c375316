package dev.once.guard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.guard.app.GuardTestApplication;
import dev.once.test.TestDatabase;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.json.JsonMapper;

/**
 * Bad input is the client's error and is never stored as the server's: a body without an exact fingerprint is refused
 * before the claim, a value the database refuses is answered 400 or 409 and frees the key, and the guard's own failure
 * is a problem+json 500 with a code. Real HTTP, real PostgreSQL.
 */
@SpringBootTest(classes = GuardTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class GuardBadInputIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(10);

    static final JsonMapper JSON = JsonMapper.builder().build();
    static final String ADA = "{\"name\":\"Ada\",\"email\":\"ada@example.com\"}";

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", db::jdbcUrl);
        registry.add("spring.datasource.username", () -> db.server().username());
        registry.add("spring.datasource.password", () -> db.server().password());
        registry.add("spring.jpa.hibernate.ddl-auto", () -> "create");
        registry.add("spring.jpa.open-in-view", () -> "false");
    }

    @LocalServerPort
    int port;

    Http http;
    JdbcTemplate jdbc;

    @BeforeEach
    void setUp() {
        http = new Http(port);
        jdbc = new JdbcTemplate(db.dataSource());
    }

    @Test
    void two_bodies_that_differ_only_in_unpaired_surrogates_are_both_refused_and_never_replay_each_other() {
        String key = key();

        HttpResponse<String> first = http.post("/accounts", "alice", key, "{\"name\":\"\\ud800\",\"email\":\"a@b.c\"}");
        HttpResponse<String> second = http.post("/accounts", "alice", key, "{\"name\":\"\\udbff\",\"email\":\"a@b.c\"}");

        assertProblem(first, 400, "INVALID_UNICODE");
        assertProblem(second, 400, "INVALID_UNICODE");
        assertThat(records(key)).isZero();
    }

    @Test
    void nul_in_a_json_string_is_refused_before_the_claim_and_the_key_stays_free() {
        String key = key();

        HttpResponse<String> refused = http.post("/accounts", "alice", key, "{\"name\":\"A\\u0000da\",\"email\":\"a@b.c\"}");
        HttpResponse<String> corrected = http.post("/accounts", "alice", key, ADA);

        assertProblem(refused, 400, "UNSTORABLE_CHARACTER");
        assertThat(corrected.statusCode()).isEqualTo(201);
    }

    @Test
    void numbers_beyond_a_big_decimal_and_duplicate_members_are_refused_with_their_codes() {
        assertProblem(http.post("/documents", "alice", key(), "{\"n\":1e2147483649}"), 400, "NUMBER_OUT_OF_RANGE");
        assertProblem(http.post("/documents", "alice", key(), "{\"n\":1,\"n\":2}"), 400, "DUPLICATE_MEMBER");
        assertProblem(http.post("/documents", "alice", key(), "[" .repeat(600) + "]".repeat(600)), 400, "BODY_TOO_COMPLEX");
    }

    @Test
    void a_value_the_database_refuses_for_its_type_is_400_not_stored_and_the_key_may_be_used_again() {
        String key = key();
        // a valid JSON number, far beyond PostgreSQL's numeric range: the jsonb insert fails with SQLState 22003
        HttpResponse<String> refused = http.post("/documents", "alice", key, "{\"n\":1e999999}");
        HttpResponse<String> again = http.post("/documents", "alice", key, "{\"n\":1e999999}");
        HttpResponse<String> corrected = http.post("/documents", "alice", key, "{\"n\":1e9}");

        assertProblem(refused, 400, "REQUEST_DATA_REJECTED");
        assertProblem(again, 400, "REQUEST_DATA_REJECTED");
        assertThat(again.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(corrected.statusCode()).isEqualTo(201);
        assertThat(outboxEvents(corrected)).isEqualTo(1);
    }

    @Test
    void nul_in_a_body_that_is_not_json_reaches_the_database_and_is_refused_there_as_the_clients_error() {
        byte[] text = "{\"n\":\"a\\u0000b\"}".getBytes(StandardCharsets.UTF_8); // text/plain: hashed as bytes

        HttpResponse<String> refused = http.post("/documents", "alice", key(), "text/plain", text);

        assertProblem(refused, 400, "REQUEST_DATA_REJECTED");
    }

    @Test
    void a_write_that_violates_a_constraint_is_409_not_stored_and_succeeds_once_the_conflicting_row_is_gone() {
        UUID id = UUID.randomUUID();
        String path = "/documents/" + id;
        assertThat(http.post(path, "alice", key(), "{\"v\":1}").statusCode()).isEqualTo(201);
        String key = key();

        HttpResponse<String> conflicting = http.post(path, "alice", key, "{\"v\":2}");
        jdbc.update("DELETE FROM guard_document WHERE id = ?", id);
        HttpResponse<String> retried = http.post(path, "alice", key, "{\"v\":2}");

        assertProblem(conflicting, 409, "REQUEST_CONSTRAINT_VIOLATED");
        assertThat(retried.statusCode()).as(retried.body()).isEqualTo(201);
        assertThat(retried.headers().firstValue("Idempotent-Replayed")).isEmpty();
    }

    @Test
    void a_body_spring_cannot_read_on_a_guarded_route_is_a_problem_with_a_code() {
        assertProblem(http.post("/accounts", "alice", key(), "{\"name\": "), 400, "MALFORMED_BODY");
        assertProblem(http.post("/accounts", "alice", key(), "[1,2]"), 400, "MALFORMED_BODY");
        assertProblem(http.post("/accounts/not-a-uuid/notes", "alice", key(), "{}"), 400, "BAD_REQUEST");
    }

    @Test
    void a_failure_of_the_guard_itself_is_a_problem_500_with_a_code_and_nothing_is_stored() {
        jdbc.execute("ALTER TABLE idempotency_record RENAME TO idempotency_record_away");
        HttpResponse<String> failed;
        try {
            failed = http.post("/accounts", "alice", key(), ADA);
        } finally {
            jdbc.execute("ALTER TABLE idempotency_record_away RENAME TO idempotency_record");
        }

        assertProblem(failed, 500, "IDEMPOTENCY_GUARD_ERROR");
        assertThat(body(failed).get("detail").toString()).doesNotContain("idempotency_record"); // no internals
    }

    private static String key() {
        return UUID.randomUUID().toString();
    }

    private long records(String key) {
        return jdbc.queryForObject("SELECT count(*) FROM idempotency_record WHERE idempotency_key = ?", Long.class, key);
    }

    private long outboxEvents(HttpResponse<String> created) {
        return jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE aggregate_id = ?", Long.class,
                body(created).get("id"));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> body(HttpResponse<String> response) {
        return JSON.readValue(response.body(), Map.class);
    }

    private static void assertProblem(HttpResponse<String> response, int status, String code) {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
                ct -> assertThat(ct).startsWith("application/problem+json"));
        assertThat(body(response)).containsEntry("code", code).containsEntry("status", status);
    }
}
