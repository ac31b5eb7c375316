package dev.once.idempotency;

import static dev.once.idempotency.StoreFixture.created;
import static dev.once.idempotency.StoreFixture.hashOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.once.idempotency.ClaimResult.Claimed;
import dev.once.test.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** expire, purge and findStuck: bounded batches, live records untouched. */
class SweepsIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create();

    IdempotencyStore store;
    IdempotencyOperations operations;
    JdbcTemplate jdbc;

    static final ClaimPolicy SHORT_TTL = ClaimPolicy.custom().lease(Duration.ofMillis(50)).ttl(Duration.ofMillis(300)).build();

    @BeforeEach
    void cleanTable() {
        OnceMigrations.migrate(db.dataSource());
        store = IdempotencyStore.create(db.dataSource());
        operations = IdempotencyOperations.create(db.dataSource());
        jdbc = new JdbcTemplate(db.dataSource());
        jdbc.update("DELETE FROM idempotency_record");
    }

    @Test
    void expire_marks_only_records_past_their_ttl_in_bounded_batches() {
        List<IdempotencyScope> shortLived = records(23, SHORT_TTL, true);
        List<IdempotencyScope> live = records(5, ClaimPolicy.ofDefaults(), true);
        List<IdempotencyScope> processing = records(3, ClaimPolicy.ofDefaults(), false);
        await().atMost(Duration.ofSeconds(10)).until(() -> operations.countExpirable() == 23);
        List<Long> progress = new ArrayList<>();

        SweepResult result = operations.expire(10, progress::add);

        assertThat(result.rows()).isEqualTo(23);
        assertThat(result.batches()).isEqualTo(3);
        assertThat(progress).containsExactly(10L, 20L, 23L);
        assertThat(countByStatus("expired")).isEqualTo(23);
        assertThat(countByStatus("succeeded")).isEqualTo(5);
        assertThat(countByStatus("processing")).isEqualTo(3);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM idempotency_record WHERE status = 'expired' AND locked_until IS NOT NULL", Long.class)).isZero();
        assertThat(operations.diagnose(shortLived.get(0), null).state()).isEqualTo(Diagnosis.State.EXPIRED_REUSABLE);
        assertThat(operations.diagnose(live.get(0), null).state()).isEqualTo(Diagnosis.State.REPLAYABLE);
        assertThat(operations.diagnose(processing.get(0), null).state()).isEqualTo(Diagnosis.State.IN_PROGRESS);
        assertThat(operations.expire(10)).isEqualTo(new SweepResult(0, 1));
    }

    @Test
    void expire_without_confirmation_can_be_previewed_by_counting() {
        records(4, SHORT_TTL, true);
        await().atMost(Duration.ofSeconds(10)).until(() -> operations.countExpirable() == 4);

        assertThat(countByStatus("expired")).as("counting changes nothing").isZero();
    }

    @Test
    void purge_deletes_expired_records_older_than_the_threshold_in_batches() {
        records(12, SHORT_TTL, true);
        records(4, ClaimPolicy.ofDefaults(), true);
        await().atMost(Duration.ofSeconds(10)).until(() -> operations.countExpirable() == 12);
        operations.expire(100);

        assertThat(operations.purge(Duration.ofDays(7), 5).rows()).as("nothing is a week old").isZero();
        SweepResult purged = operations.purge(Duration.ZERO, 5);

        assertThat(purged).isEqualTo(new SweepResult(12, 3));
        assertThat(jdbc.queryForObject("SELECT count(*) FROM idempotency_record", Long.class)).isEqualTo(4);
    }

    @Test
    void find_stuck_lists_lapsed_leases_and_old_claims_only() {
        IdempotencyScope lapsed = IdempotencyScope.of("acme", "alice", StoreFixture.ROUTE, "lapsed");
        IdempotencyScope other = IdempotencyScope.of("globex", "carol", StoreFixture.ROUTE, "lapsed-too");
        store.claim(lapsed, hashOf("{}"), ClaimPolicy.custom().lease(Duration.ofMillis(100)).build());
        store.claim(other, hashOf("{}"), ClaimPolicy.custom().lease(Duration.ofMillis(100)).build());
        IdempotencyScope busy = IdempotencyScope.of("acme", "alice", StoreFixture.ROUTE, "busy");
        store.claim(busy, hashOf("{}"), ClaimPolicy.ofDefaults());
        records(2, ClaimPolicy.ofDefaults(), true);

        await().atMost(Duration.ofSeconds(10)).until(() -> operations.findStuck(Duration.ofHours(1)).size() == 2);
        List<StuckRecord> stuck = operations.findStuck(Duration.ofHours(1));

        assertThat(stuck).extracting(StuckRecord::scope).containsExactly(lapsed, other);
        assertThat(stuck).allSatisfy(s -> {
            assertThat(s.leaseLapsed()).isTrue();
            assertThat(s.attempts()).isEqualTo(1);
            assertThat(s.age()).isPositive();
        });
        assertThat(operations.findStuck(Duration.ofHours(1), "globex", 10)).extracting(StuckRecord::scope).containsExactly(other);
        assertThat(operations.findStuck(Duration.ZERO)).extracting(StuckRecord::scope).as("the live claim is old enough at 0s")
                .containsExactlyInAnyOrder(lapsed, other, busy);
    }

    @Test
    void sweeps_refuse_to_run_inside_a_transaction() {
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(db.dataSource()));

        assertThatThrownBy(() -> tx.executeWithoutResult(s -> operations.expire(10)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("outside a transaction");
    }

    private List<IdempotencyScope> records(int n, ClaimPolicy policy, boolean complete) {
        List<IdempotencyScope> scopes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            IdempotencyScope scope = StoreFixture.freshScope();
            Claimed c = (Claimed) store.claim(scope, hashOf("{}"), policy);
            if (complete) {
                store.markSucceeded(c.token(), created("{}"));
            }
            scopes.add(scope);
        }
        return scopes;
    }

    private long countByStatus(String status) {
        return jdbc.queryForObject("SELECT count(*) FROM idempotency_record WHERE status = ?", Long.class, status);
    }
}
