package dev.once.idempotency;

import static dev.once.idempotency.StoreFixture.ROUTE;
import static dev.once.idempotency.StoreFixture.created;
import static dev.once.idempotency.StoreFixture.freshScope;
import static dev.once.idempotency.StoreFixture.hashOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.audit.Operator;
import dev.once.idempotency.ClaimResult.Claimed;
import dev.once.idempotency.ClaimResult.Conflict;
import dev.once.idempotency.ClaimResult.Failed;
import dev.once.idempotency.ClaimResult.InProgress;
import dev.once.idempotency.ClaimResult.Replay;
import dev.once.outbox.OutboxEvent;
import dev.once.outbox.UuidV7;
import dev.once.test.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

/** The claim's outcomes and the state machine, on a real PostgreSQL with a non-UTC session time zone. */
class ClaimIT {

    private static final Operator OPERATOR = new Operator("ops", Operator.API, "its worker is gone");

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().sessionTimeZone("Asia/Kathmandu");

    static IdempotencyStore store;
    static IdempotencyOperations operations;

    static final ClaimPolicy SHORT_LEASE = ClaimPolicy.custom().lease(Duration.ofMillis(300)).build();

    @BeforeAll
    static void migrate() {
        OnceMigrations.migrate(db.dataSource());
        store = IdempotencyStore.create(db.dataSource());
        operations = IdempotencyOperations.create(db.dataSource());
    }

    @Test
    void first_claim_is_fresh_and_carries_a_fencing_token() {
        ClaimResult result = store.claim(freshScope(), hashOf("{}"), ClaimPolicy.ofDefaults());

        assertThat(result).isInstanceOfSatisfying(Claimed.class, claimed -> {
            assertThat(claimed.kind()).isEqualTo(Claimed.Kind.FRESH);
            assertThat(claimed.token().fencingToken()).isEqualTo(1);
        });
    }

    @Test
    void second_claim_with_same_key_while_processing_is_in_progress_until_the_lease_lapses() {
        IdempotencyScope scope = freshScope();
        store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults());

        ClaimResult second = store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults());

        assertThat(second).isInstanceOfSatisfying(InProgress.class, p -> {
            assertThat(p.retryAfter()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(30));
            assertThat(p.lockedUntil()).isNotNull();
        });
    }

    @Test
    void succeeded_request_is_replayed_with_response_and_bindings() {
        IdempotencyScope scope = freshScope();
        Claimed claimed = (Claimed) store.claim(scope, hashOf("{\"name\":\"Ada\"}"), ClaimPolicy.ofDefaults());
        UUID eventId = UUID.randomUUID();
        store.markSucceeded(claimed.token(), created("{\"id\":1}"), "task-7", eventId).orThrow(claimed.token());

        ClaimResult again = store.claim(scope, hashOf("{ \"name\" : \"Ada\" }"), ClaimPolicy.ofDefaults());

        assertThat(again).isInstanceOfSatisfying(Replay.class, replay -> {
            assertThat(replay.response()).isEqualTo(created("{\"id\":1}"));
            assertThat(replay.response().headers()).containsEntry("Location", "/accounts/1");
            assertThat(replay.taskId()).isEqualTo("task-7");
            assertThat(replay.outboxEventId()).isEqualTo(eventId);
        });
    }

    @Test
    void same_key_with_another_request_hash_is_a_conflict_in_every_state() {
        IdempotencyScope processing = freshScope();
        store.claim(processing, hashOf("{\"a\":1}"), ClaimPolicy.ofDefaults());
        IdempotencyScope succeeded = freshScope();
        Claimed s = (Claimed) store.claim(succeeded, hashOf("{\"a\":1}"), ClaimPolicy.ofDefaults());
        store.markSucceeded(s.token(), created("{}"));

        assertThat(store.claim(processing, hashOf("{\"a\":2}"), ClaimPolicy.ofDefaults()))
                .isInstanceOfSatisfying(Conflict.class, c -> assertThat(c.storedRequestHash()).isEqualTo(hashOf("{\"a\":1}")));
        assertThat(store.claim(succeeded, hashOf("{\"a\":2}"), ClaimPolicy.ofDefaults())).isInstanceOf(Conflict.class);
    }

    @Test
    void same_key_under_another_tenant_user_or_route_is_an_independent_claim() {
        String key = UUID.randomUUID().toString();
        String hash = hashOf("{}");
        Claimed first = (Claimed) store.claim(IdempotencyScope.of("acme", "alice", ROUTE, key), hash, ClaimPolicy.ofDefaults());
        store.markSucceeded(first.token(), created("{\"owner\":\"alice\"}"));

        assertThat(store.claim(IdempotencyScope.of("globex", "alice", ROUTE, key), hash, ClaimPolicy.ofDefaults()))
                .isInstanceOfSatisfying(Claimed.class, c -> assertThat(c.kind()).isEqualTo(Claimed.Kind.FRESH));
        assertThat(store.claim(IdempotencyScope.of("acme", "bob", ROUTE, key), hash, ClaimPolicy.ofDefaults()))
                .isInstanceOf(Claimed.class);
        assertThat(store.claim(IdempotencyScope.of("acme", "alice", Route.http("POST", "/files"), key), hash,
                ClaimPolicy.ofDefaults())).isInstanceOf(Claimed.class);
    }

    @Test
    void lapsed_lease_is_reclaimed_by_the_same_request_only_and_the_old_claimant_is_fenced_off() {
        IdempotencyScope scope = freshScope();
        String hash = hashOf("{\"amount\":10}");
        Claimed slow = (Claimed) store.claim(scope, hash, SHORT_LEASE);

        await().atMost(Duration.ofSeconds(10)).until(() ->
                operations.diagnose(scope, hash).state() == Diagnosis.State.LEASE_EXPIRED);
        assertThat(store.claim(scope, hashOf("{\"amount\":11}"), SHORT_LEASE)).isInstanceOf(Conflict.class);
        Claimed retry = (Claimed) store.claim(scope, hash, ClaimPolicy.ofDefaults());

        assertThat(retry.kind()).isEqualTo(Claimed.Kind.LEASE_RECLAIMED);
        assertThat(retry.token().fencingToken()).isEqualTo(slow.token().fencingToken() + 1);
        assertThat(store.markSucceeded(retry.token(), created("{\"winner\":\"retry\"}"))).isEqualTo(TransitionResult.APPLIED);
        assertThat(store.markSucceeded(slow.token(), created("{\"winner\":\"slow\"}"))).isEqualTo(TransitionResult.STALE);
        assertThat(store.bindOutboxEvent(slow.token(), UUID.randomUUID())).isEqualTo(TransitionResult.STALE);
        assertThat(store.claim(scope, hash, ClaimPolicy.ofDefaults()))
                .isInstanceOfSatisfying(Replay.class, r -> assertThat(r.response().bodyAsString()).isEqualTo("{\"winner\":\"retry\"}"));
    }

    @Test
    void a_slow_claimant_whose_lease_lapsed_but_was_not_reclaimed_may_still_complete() {
        IdempotencyScope scope = freshScope();
        Claimed slow = (Claimed) store.claim(scope, hashOf("{}"), SHORT_LEASE);
        await().atMost(Duration.ofSeconds(10)).until(() ->
                operations.diagnose(scope, null).state() == Diagnosis.State.LEASE_EXPIRED);

        assertThat(store.markSucceeded(slow.token(), created("{}"))).isEqualTo(TransitionResult.APPLIED);
        assertThat(operations.diagnose(scope, null).state()).isEqualTo(Diagnosis.State.REPLAYABLE);
    }

    @Test
    void failed_request_replays_its_failure_unless_the_policy_allows_a_retry() {
        IdempotencyScope scope = freshScope();
        String hash = hashOf("{}");
        Claimed first = (Claimed) store.claim(scope, hash, ClaimPolicy.ofDefaults());
        StoredResponse failure = StoredResponse.of(500, "application/problem+json", "{\"code\":\"BOOM\"}");
        store.markFailed(first.token(), failure).orThrow(first.token());

        assertThat(store.claim(scope, hash, ClaimPolicy.ofDefaults()))
                .isInstanceOfSatisfying(Failed.class, f -> assertThat(f.response()).isEqualTo(failure));
        assertThat(store.claim(scope, hashOf("{\"other\":1}"), ClaimPolicy.custom().retryFailed(true).build()))
                .isInstanceOf(Conflict.class);

        ClaimResult retried = store.claim(scope, hash, ClaimPolicy.custom().retryFailed(true).build());
        assertThat(retried).isInstanceOfSatisfying(Claimed.class, c -> {
            assertThat(c.kind()).isEqualTo(Claimed.Kind.FAILED_RETRY);
            assertThat(c.token().fencingToken()).isEqualTo(2);
        });
        assertThat(store.markSucceeded(first.token(), created("{}"))).isEqualTo(TransitionResult.STALE);
    }

    @Test
    void ttl_expiry_makes_the_key_reusable_by_any_request() {
        IdempotencyScope scope = freshScope();
        ClaimPolicy shortTtl = ClaimPolicy.custom().lease(Duration.ofMillis(100)).ttl(Duration.ofMillis(400)).build();
        Claimed first = (Claimed) store.claim(scope, hashOf("{\"v\":1}"), shortTtl);
        store.markSucceeded(first.token(), created("{}"));

        await().atMost(Duration.ofSeconds(10)).until(() ->
                operations.diagnose(scope, null).state() == Diagnosis.State.EXPIRED_REUSABLE);

        ClaimResult reuse = store.claim(scope, hashOf("{\"v\":2}"), ClaimPolicy.ofDefaults());
        assertThat(reuse).isInstanceOfSatisfying(Claimed.class, c -> {
            assertThat(c.kind()).isEqualTo(Claimed.Kind.EXPIRED_REUSED);
            assertThat(c.token().fencingToken()).isEqualTo(2);
        });
        assertThat(operations.diagnose(scope, null).response()).as("the old response is gone").isNull();
    }

    @Test
    void released_claim_frees_the_key_for_any_request_and_fences_the_releaser() {
        IdempotencyScope scope = freshScope();
        Claimed first = (Claimed) store.claim(scope, hashOf("{\"try\":1}"), ClaimPolicy.ofDefaults());

        assertThat(store.release(first.token())).isEqualTo(TransitionResult.APPLIED);
        ClaimResult next = store.claim(scope, hashOf("{\"try\":2}"), ClaimPolicy.ofDefaults());

        assertThat(next).isInstanceOfSatisfying(Claimed.class, c -> assertThat(c.kind()).isEqualTo(Claimed.Kind.EXPIRED_REUSED));
        assertThat(store.release(first.token())).isEqualTo(TransitionResult.STALE);
        assertThat(store.markSucceeded(first.token(), created("{}"))).isEqualTo(TransitionResult.STALE);
    }

    @Test
    void an_operator_force_release_frees_a_stuck_key_and_fences_off_its_claimant() {
        IdempotencyScope scope = freshScope();
        Claimed stuck = (Claimed) store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults());

        assertThat(operations.forceRelease(scope, false, OPERATOR)).isEqualTo(ReleaseResult.LEASE_LIVE);
        assertThat(operations.forceRelease(scope, true, OPERATOR)).isEqualTo(ReleaseResult.RELEASED);
        assertThat(operations.forceRelease(scope, true, OPERATOR)).isEqualTo(ReleaseResult.NOT_PROCESSING);
        assertThat(operations.forceRelease(freshScope(), true, OPERATOR)).isEqualTo(ReleaseResult.NOT_FOUND);

        assertThat(store.markSucceeded(stuck.token(), created("{}"))).isEqualTo(TransitionResult.STALE);
        assertThat(store.claim(scope, hashOf("{\"other\":1}"), ClaimPolicy.ofDefaults())).isInstanceOf(Claimed.class);
    }

    @Test
    void a_claim_forgotten_by_a_database_crash_cannot_touch_the_request_that_inherits_its_id() {
        IdempotencyScope forgottenScope = IdempotencyScope.of("acme", "alice", ROUTE, UUID.randomUUID().toString());
        Claimed forgotten = (Claimed) store.claim(forgottenScope, hashOf("{}"), ClaimPolicy.ofDefaults());
        // What crash recovery does to an asynchronously committed claim: the row is gone, the id sequence rewound.
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        jdbc.update("DELETE FROM idempotency_record WHERE id = ?", forgotten.token().recordId());
        jdbc.queryForObject("SELECT setval(pg_get_serial_sequence('idempotency_record', 'id'), ?, false)", Long.class,
                forgotten.token().recordId());
        IdempotencyScope heirScope = IdempotencyScope.of("globex", "carol", ROUTE, forgottenScope.key().value());
        Claimed heir = (Claimed) store.claim(heirScope, hashOf("{}"), ClaimPolicy.ofDefaults());
        assertThat(heir.token().recordId()).isEqualTo(forgotten.token().recordId());
        assertThat(heir.token().fencingToken()).isEqualTo(forgotten.token().fencingToken());

        assertThat(store.markSucceeded(forgotten.token(), created("{\"tenant\":\"acme\"}"))).isEqualTo(TransitionResult.STALE);
        assertThat(store.markSucceededWithEvents(forgotten.token(), created("{}"), null, List.of(OutboxEvent.builder()
                .id(UuidV7.next()).tenantId("acme").actorId("alice").aggregate("account", "1").type("AccountCreated", 1)
                .payloadJson("{}").build()))).isEqualTo(TransitionResult.STALE);
        assertThat(store.bindTask(forgotten.token(), "task-1")).isEqualTo(TransitionResult.STALE);
        assertThat(store.bindOutboxEvent(forgotten.token(), UUID.randomUUID())).isEqualTo(TransitionResult.STALE);
        assertThat(store.release(forgotten.token())).isEqualTo(TransitionResult.STALE);
        assertThat(store.markFailed(forgotten.token(), created("{}"))).isEqualTo(TransitionResult.STALE);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE tenant_id = 'acme' AND aggregate_id = '1'",
                Long.class)).isZero();

        assertThat(store.markSucceeded(heir.token(), created("{\"tenant\":\"globex\"}"))).isEqualTo(TransitionResult.APPLIED);
        assertThat(store.claim(heirScope, hashOf("{}"), ClaimPolicy.ofDefaults())).isInstanceOfSatisfying(Replay.class,
                r -> assertThat(r.response().bodyAsString()).isEqualTo("{\"tenant\":\"globex\"}"));
    }

    @Test
    void a_claim_outside_a_transaction_commits_asynchronously_unless_the_policy_asks_for_a_durable_one() {
        ClaimPolicy durable = ClaimPolicy.custom().durable(true).build();

        assertThat(ClaimPolicy.ofDefaults().durable()).isFalse();
        assertThat(durable).isNotEqualTo(ClaimPolicy.ofDefaults()).isEqualTo(durable.toBuilder().build());
        assertThat(ClaimStatement.freshInsert(ClaimPolicy.ofDefaults(), false)).isEqualTo(ClaimStatement.INSERT_FRESH_ASYNC_COMMIT);
        assertThat(ClaimStatement.freshInsert(durable, false)).isEqualTo(ClaimStatement.INSERT_FRESH);
        assertThat(ClaimStatement.freshInsert(ClaimPolicy.ofDefaults(), true))
                .as("inside a transaction the caller's durability applies").isEqualTo(ClaimStatement.INSERT_FRESH);
        assertThat(store.claim(freshScope(), hashOf("{}"), durable)).isInstanceOfSatisfying(Claimed.class,
                c -> assertThat(c.kind()).isEqualTo(Claimed.Kind.FRESH));
    }

    @Test
    void task_and_outbox_bindings_are_replayed() {
        IdempotencyScope scope = freshScope();
        Claimed claimed = (Claimed) store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults());
        UUID eventId = UUID.randomUUID();

        assertThat(store.bindTask(claimed.token(), "task-42")).isEqualTo(TransitionResult.APPLIED);
        assertThat(store.bindOutboxEvent(claimed.token(), eventId)).isEqualTo(TransitionResult.APPLIED);
        store.markSucceeded(claimed.token(), StoredResponse.of(202, "application/json", "{\"task_id\":\"task-42\"}"));

        assertThat(store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults())).isInstanceOfSatisfying(Replay.class, r -> {
            assertThat(r.taskId()).isEqualTo("task-42");
            assertThat(r.outboxEventId()).isEqualTo(eventId);
            assertThat(r.response().statusCode()).isEqualTo(202);
        });
    }

    @Test
    void binary_responses_are_stored_as_bytes_with_their_content_type() {
        IdempotencyScope scope = freshScope();
        byte[] png = {(byte) 0x89, 'P', 'N', 'G', 0, (byte) 0xFF};
        Claimed claimed = (Claimed) store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults());
        store.markSucceeded(claimed.token(), StoredResponse.of(200, "image/png", png));

        assertThat(store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults())).isInstanceOfSatisfying(Replay.class, r -> {
            assertThat(r.response().body()).containsExactly(png);
            assertThat(r.response().contentType()).isEqualTo("image/png");
        });
    }
}
