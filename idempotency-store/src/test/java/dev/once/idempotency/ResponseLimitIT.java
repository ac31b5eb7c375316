package dev.once.idempotency;

import static dev.once.idempotency.StoreFixture.freshScope;
import static dev.once.idempotency.StoreFixture.hashOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.idempotency.ClaimResult.Claimed;
import dev.once.idempotency.ClaimResult.Replay;
import dev.once.test.TestDatabase;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The stored response is bounded; above the limit the behaviour is the configured one, never a silent truncation. */
class ResponseLimitIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create();

    @BeforeAll
    static void migrate() {
        OnceMigrations.migrate(db.dataSource());
    }

    @Test
    void by_default_a_body_over_64_KiB_is_refused_and_the_record_stays_processing() {
        IdempotencyStore store = IdempotencyStore.create(db.dataSource());
        IdempotencyOperations operations = IdempotencyOperations.create(db.dataSource());
        IdempotencyScope scope = freshScope();
        Claimed c = (Claimed) store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults());
        byte[] big = new byte[IdempotencyDefaults.MAX_RESPONSE_BODY_BYTES + 1];

        assertThatThrownBy(() -> store.markSucceeded(c.token(), StoredResponse.of(200, "application/octet-stream", big)))
                .isInstanceOfSatisfying(ResponseTooLargeException.class, e -> {
                    assertThat(e.size()).isEqualTo(65_537);
                    assertThat(e.limit()).isEqualTo(65_536);
                })
                .hasMessageContaining("max-response-body-bytes");
        assertThat(IdempotencyOperations.create(db.dataSource()).diagnose(scope, null).state()).isEqualTo(Diagnosis.State.IN_PROGRESS);
        assertThat(store.markSucceeded(c.token(), StoredResponse.of(200, "application/octet-stream", new byte[65_536])))
                .as("exactly the limit is fine").isEqualTo(TransitionResult.APPLIED);
    }

    @Test
    void with_omit_body_the_status_and_headers_are_replayed_and_the_omission_is_flagged() {
        IdempotencyStore store = IdempotencyStore.create(db.dataSource(),
                IdempotencyStoreOptions.ofDefaults().withMaxResponseBodyBytes(10).withOversizedResponse(OversizedResponse.OMIT_BODY));
        IdempotencyScope scope = freshScope();
        Claimed c = (Claimed) store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults());

        store.markSucceeded(c.token(), StoredResponse.of(201, "application/json", "{\"name\":\"a long name\"}")
                .withHeader("Location", "/accounts/7")).orThrow(c.token());

        assertThat(store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults())).isInstanceOfSatisfying(Replay.class, r -> {
            assertThat(r.response().statusCode()).isEqualTo(201);
            assertThat(r.response().headers()).containsEntry("Location", "/accounts/7");
            assertThat(r.response().body()).isEmpty();
            assertThat(r.response().bodyOmitted()).isTrue();
        });
        assertThat(IdempotencyOperations.create(db.dataSource()).diagnose(scope, null).toMap()).containsEntry("response_body_omitted", true)
                .containsEntry("response_body", null);
    }
}
