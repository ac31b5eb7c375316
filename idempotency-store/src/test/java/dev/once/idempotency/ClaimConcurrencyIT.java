package dev.once.idempotency;

import static dev.once.idempotency.StoreFixture.created;
import static dev.once.idempotency.StoreFixture.freshScope;
import static dev.once.idempotency.StoreFixture.hashOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.idempotency.ClaimResult.Claimed;
import dev.once.test.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Real threads on real connections racing for one key: exact counts, no sleeps. */
class ClaimConcurrencyIT {

    static final int THREADS = 48;

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(THREADS + 2);

    static IdempotencyStore store;
    static IdempotencyOperations operations;
    static ExecutorService pool;

    @BeforeAll
    static void setUp() {
        OnceMigrations.migrate(db.dataSource());
        store = IdempotencyStore.create(db.dataSource());
        operations = IdempotencyOperations.create(db.dataSource());
        pool = Executors.newFixedThreadPool(THREADS);
    }

    @AfterAll
    static void tearDown() {
        pool.shutdownNow();
    }

    @RepeatedTest(3)
    void many_threads_claiming_one_scope_yield_exactly_one_claimed_and_the_rest_in_progress() throws Exception {
        IdempotencyScope scope = freshScope();

        List<ClaimResult> results = race(() -> store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults()));

        Map<Class<?>, Long> byOutcome = countByType(results);
        assertThat(byOutcome).containsOnlyKeys(Claimed.class, ClaimResult.InProgress.class);
        assertThat(byOutcome.get(Claimed.class)).isEqualTo(1);
        assertThat(byOutcome.get(ClaimResult.InProgress.class)).isEqualTo(THREADS - 1);
    }

    @Test
    void racers_around_a_completion_see_one_claim_then_in_progress_or_the_replay() throws Exception {
        IdempotencyScope scope = freshScope();
        Claimed winner = (Claimed) store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults());
        CountDownLatch halfway = new CountDownLatch(THREADS / 2);
        Future<TransitionResult> completion = Executors.newSingleThreadExecutor().submit(() -> {
            halfway.await();
            return store.markSucceeded(winner.token(), created("{\"id\":1}"));
        });

        List<ClaimResult> results = race(() -> {
            ClaimResult r = store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults());
            halfway.countDown();
            return r;
        });

        assertThat(completion.get()).isEqualTo(TransitionResult.APPLIED);
        assertThat(results).allSatisfy(r -> assertThat(r).isInstanceOfAny(ClaimResult.InProgress.class, ClaimResult.Replay.class));
        assertThat(store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults())).isInstanceOf(ClaimResult.Replay.class);
    }

    @Test
    void a_claim_inserted_completed_holds_a_duplicate_on_the_unique_key_until_commit_and_a_rollback_leaves_nothing()
            throws Exception {
        for (boolean commit : new boolean[] {true, false}) {
            IdempotencyScope scope = freshScope();
            StoredResponse handled = StoredResponse.of(200, null, new byte[0]);
            org.springframework.transaction.support.TransactionTemplate tx =
                    new org.springframework.transaction.support.TransactionTemplate(
                            new org.springframework.jdbc.datasource.DataSourceTransactionManager(db.dataSource()));
            CountDownLatch inserted = new CountDownLatch(1);
            CountDownLatch finish = new CountDownLatch(1);
            Future<boolean[]> first = pool.submit(() -> tx.execute(s -> {
                boolean[] claimed = store.claimCompleted(List.of(scope), List.of("v1:h"), ClaimPolicy.ofDefaults(), handled);
                inserted.countDown();
                awaitLatch(finish);
                if (!commit) {
                    s.setRollbackOnly(); // the handler failed: nothing of its transaction stays
                }
                return claimed;
            }));
            inserted.await();
            Future<boolean[]> duplicate = pool.submit(() -> tx.execute(s -> store.claimCompleted(List.of(scope),
                    List.of("v1:h"), ClaimPolicy.ofDefaults(), handled)));
            org.springframework.jdbc.core.JdbcTemplate jdbc = new org.springframework.jdbc.core.JdbcTemplate(db.dataSource());
            await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype = 'transactionid'", Long.class) > 0);
            finish.countDown();

            assertThat(first.get()[0]).isTrue();
            assertThat(duplicate.get()[0]).as(commit ? "the duplicate found the key taken" : "the key was free again")
                    .isEqualTo(!commit);
            assertThat(store.claim(scope, "v1:h", ClaimPolicy.ofDefaults())).isInstanceOf(ClaimResult.Replay.class);
        }
    }

    private static void awaitLatch(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Test
    void many_threads_reclaiming_a_lapsed_lease_yield_exactly_one_new_owner() throws Exception {
        IdempotencyScope scope = freshScope();
        ClaimPolicy shortLease = ClaimPolicy.custom().lease(Duration.ofMillis(200)).build();
        store.claim(scope, hashOf("{}"), shortLease);
        await().atMost(Duration.ofSeconds(10)).until(() ->
                operations.diagnose(scope, null).state() == Diagnosis.State.LEASE_EXPIRED);

        List<ClaimResult> results = race(() -> store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults()));

        List<Claimed> owners = results.stream().filter(Claimed.class::isInstance).map(Claimed.class::cast).toList();
        assertThat(owners).singleElement().satisfies(owner -> {
            assertThat(owner.kind()).isEqualTo(Claimed.Kind.LEASE_RECLAIMED);
            assertThat(owner.token().fencingToken()).isEqualTo(2);
        });
        assertThat(results).filteredOn(ClaimResult.InProgress.class::isInstance).hasSize(THREADS - 1);
    }

    @Test
    void many_distinct_keys_claimed_concurrently_are_all_fresh() throws Exception {
        List<ClaimResult> results = race(() -> store.claim(freshScope(), hashOf("{}"), ClaimPolicy.ofDefaults()));

        assertThat(results).hasSize(THREADS).allSatisfy(r -> assertThat(r).isInstanceOf(Claimed.class));
    }

    /** Runs {@code claim} on every thread at once, released together by a start gate. */
    private static List<ClaimResult> race(java.util.concurrent.Callable<ClaimResult> claim) throws Exception {
        CountDownLatch ready = new CountDownLatch(THREADS);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<ClaimResult>> futures = new ArrayList<>();
        for (int i = 0; i < THREADS; i++) {
            futures.add(pool.submit(() -> {
                ready.countDown();
                go.await();
                return claim.call();
            }));
        }
        ready.await();
        go.countDown();
        List<ClaimResult> results = new ArrayList<>();
        for (Future<ClaimResult> f : futures) {
            results.add(f.get());
        }
        return results;
    }

    private static Map<Class<?>, Long> countByType(List<ClaimResult> results) {
        return results.stream().collect(Collectors.groupingBy(Object::getClass, Collectors.counting()));
    }
}
