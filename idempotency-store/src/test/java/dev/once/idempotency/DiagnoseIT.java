package dev.once.idempotency;

import static dev.once.idempotency.StoreFixture.created;
import static dev.once.idempotency.StoreFixture.freshScope;
import static dev.once.idempotency.StoreFixture.hashOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.idempotency.ClaimResult.Claimed;
import dev.once.idempotency.Diagnosis.State;
import dev.once.test.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.json.JsonMapper;

/** diagnose names each of the seven states, and its JSON form keeps one documented shape. */
class DiagnoseIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().sessionTimeZone("America/St_Johns");

    static IdempotencyStore store;
    static IdempotencyOperations operations;

    static final List<String> JSON_FIELDS = List.of("diagnosis", "tenant_id", "user_id", "route", "idempotency_key",
            "status", "request_hash", "request_hash_matches", "attempts", "response_code", "response_content_type",
            "response_headers", "response_body", "response_body_encoding", "response_body_omitted", "task_id",
            "outbox_event_id", "locked_until", "expires_at", "created_at", "updated_at", "checked_at");

    @BeforeAll
    static void migrate() {
        OnceMigrations.migrate(db.dataSource());
        store = IdempotencyStore.create(db.dataSource());
        operations = IdempotencyOperations.create(db.dataSource());
    }

    @Test
    void an_unknown_key_is_missing() {
        Diagnosis d = operations.diagnose(freshScope(), hashOf("{}"));

        assertThat(d.state()).isEqualTo(State.MISSING);
        assertThat(d.attempts()).isZero();
        assertThat(d.checkedAt()).isNotNull();
        assertJsonShape(d, "missing");
    }

    @Test
    void a_succeeded_key_is_replayable_with_everything_a_replay_needs() {
        IdempotencyScope scope = freshScope();
        Claimed c = (Claimed) store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults());
        UUID eventId = UUID.randomUUID();
        store.markSucceeded(c.token(), created("{\"id\":1}"), "task-1", eventId);

        Diagnosis d = operations.diagnose(scope, hashOf("{}"));

        assertThat(d.state()).isEqualTo(State.REPLAYABLE);
        assertThat(d.requestHashMatches()).isTrue();
        Map<String, Object> json = assertJsonShape(d, "replayable");
        assertThat(json).containsEntry("response_code", 201).containsEntry("response_body", "{\"id\":1}")
                .containsEntry("response_body_encoding", "utf8").containsEntry("task_id", "task-1")
                .containsEntry("outbox_event_id", eventId.toString()).containsEntry("status", "succeeded")
                .containsEntry("response_headers", Map.of("Location", "/accounts/1"));
    }

    @Test
    void another_request_hash_is_a_request_hash_conflict() {
        IdempotencyScope scope = freshScope();
        Claimed c = (Claimed) store.claim(scope, hashOf("{\"a\":1}"), ClaimPolicy.ofDefaults());
        store.markSucceeded(c.token(), created("{}"));

        Diagnosis d = operations.diagnose(scope, hashOf("{\"a\":2}"));

        assertThat(d.state()).isEqualTo(State.REQUEST_HASH_CONFLICT);
        assertThat(d.requestHashMatches()).isFalse();
        assertJsonShape(d, "request_hash_conflict");
    }

    @Test
    void a_live_claim_is_in_progress_and_a_lapsed_one_is_lease_expired() {
        IdempotencyScope live = freshScope();
        store.claim(live, hashOf("{}"), ClaimPolicy.ofDefaults());
        IdempotencyScope lapsed = freshScope();
        store.claim(lapsed, hashOf("{}"), ClaimPolicy.custom().lease(Duration.ofMillis(100)).build());

        assertThat(operations.diagnose(live, null).state()).isEqualTo(State.IN_PROGRESS);
        assertJsonShape(operations.diagnose(live, null), "in_progress");
        await().atMost(Duration.ofSeconds(10)).until(() -> operations.diagnose(lapsed, null).state() == State.LEASE_EXPIRED);
        assertJsonShape(operations.diagnose(lapsed, null), "lease_expired");
    }

    @Test
    void a_failed_key_requires_an_explicit_retry() {
        IdempotencyScope scope = freshScope();
        Claimed c = (Claimed) store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults());
        store.markFailed(c.token(), StoredResponse.of(500, "application/problem+json", "{\"code\":\"X\"}"));

        Diagnosis d = operations.diagnose(scope, null);

        assertThat(d.state()).isEqualTo(State.FAILED_REQUIRES_EXPLICIT_RETRY);
        assertThat(d.requestHashMatches()).isNull();
        assertThat(assertJsonShape(d, "failed_requires_explicit_retry")).containsEntry("response_code", 500);
    }

    @Test
    void a_key_past_its_ttl_is_expired_reusable_whatever_the_request() {
        IdempotencyScope scope = freshScope();
        Claimed c = (Claimed) store.claim(scope, hashOf("{}"),
                ClaimPolicy.custom().lease(Duration.ofMillis(50)).ttl(Duration.ofMillis(200)).build());
        store.markSucceeded(c.token(), created("{}"));

        await().atMost(Duration.ofSeconds(10)).until(() -> operations.diagnose(scope, hashOf("{\"x\":1}")).state() == State.EXPIRED_REUSABLE);
        assertJsonShape(operations.diagnose(scope, null), "expired_reusable");
    }

    @Test
    void a_binary_body_is_base64_in_json() {
        IdempotencyScope scope = freshScope();
        Claimed c = (Claimed) store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults());
        store.markSucceeded(c.token(), StoredResponse.of(200, "application/octet-stream", new byte[] {(byte) 0xC3, 0x28}));

        Map<String, Object> json = assertJsonShape(operations.diagnose(scope, null), "replayable");

        assertThat(json).containsEntry("response_body", "wyg=").containsEntry("response_body_encoding", "base64");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> assertJsonShape(Diagnosis d, String expectedState) {
        Map<String, Object> json = JsonMapper.builder().build().readValue(d.toJson(), Map.class);
        assertThat(json.keySet()).containsExactlyElementsOf(JSON_FIELDS);
        assertThat(json).containsEntry("diagnosis", expectedState).containsEntry("tenant_id", "acme")
                .containsEntry("user_id", "alice").containsEntry("route", "POST /accounts");
        return json;
    }
}
