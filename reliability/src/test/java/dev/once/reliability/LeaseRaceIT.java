package dev.once.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.guard.FailureMapper;
import dev.once.guard.GuardListener;
import dev.once.guard.GuardResult;
import dev.once.guard.IdempotencyMutationGuard;
import dev.once.guard.IdempotencyPolicy;
import dev.once.guard.MutationRequest;
import dev.once.idempotency.IdempotencyScope;
import dev.once.idempotency.IdempotencyStore;
import dev.once.idempotency.OnceMigrations;
import dev.once.idempotency.RequestFingerprint;
import dev.once.idempotency.Route;
import dev.once.idempotency.StoredResponse;
import dev.once.test.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * Scenario 7: a slow handler outlives its lease. The retry that comes after the lease lapsed (by the database clock)
 * claims the key with a new fencing token and completes; when the slow handler finally finishes, its completion is
 * refused by the fence and its writes roll back. Twenty such races run at once: each key has exactly one effect, and
 * the stored response is the new claimant's.
 */
@ExtendWith(SummaryWatcher.class)
class LeaseRaceIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(50);

    static final Duration LEASE = Duration.ofSeconds(1);
    static final int RACES = 20;
    static final Route ROUTE = Route.http("POST", "/payouts");
    static final ExecutorService threads = Executors.newFixedThreadPool(2 * RACES);

    static JdbcTemplate jdbc;
    static IdempotencyMutationGuard guard;

    @BeforeAll
    static void schema() {
        OnceMigrations.migrate(db.dataSource());
        jdbc = new JdbcTemplate(db.dataSource());
        jdbc.execute("CREATE TABLE payout (idempotency_key text NOT NULL, claimant text NOT NULL)");
        guard = new IdempotencyMutationGuard(IdempotencyStore.create(db.dataSource()),
                new DataSourceTransactionManager(db.dataSource()), FailureMapper.INTERNAL_ERROR, GuardListener.NONE);
    }

    @AfterAll
    static void stop() {
        threads.shutdownNow();
    }

    @Test
    void a_slow_handler_past_its_lease_loses_to_the_retry_and_its_result_is_refused_by_the_fence() {
        IdempotencyPolicy policy = IdempotencyPolicy.custom().lease(LEASE).build();
        CountDownLatch slowMayFinish = new CountDownLatch(1);
        List<CompletableFuture<GuardResult>> slow = new ArrayList<>();
        List<CompletableFuture<GuardResult>> retries = new ArrayList<>();
        for (int i = 0; i < RACES; i++) {
            MutationRequest request = request("race-" + i);
            slow.add(CompletableFuture.supplyAsync(() -> guard.run(request, policy, context -> {
                pay(context.scope().key().value(), "slow");
                slowMayFinish.await(60, TimeUnit.SECONDS); // stalls like a GC pause or a hung downstream call
                return StoredResponse.of(201, "text/plain", "slow");
            }), threads));
        }
        // by the database clock, every slow claim's lease has lapsed
        await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM idempotency_record WHERE route = ? AND status = 'processing' "
                        + "AND locked_until < statement_timestamp()", Long.class, ROUTE.value()) == RACES);
        for (int i = 0; i < RACES; i++) {
            MutationRequest request = request("race-" + i);
            retries.add(CompletableFuture.supplyAsync(() -> guard.run(request, policy, context -> {
                pay(context.scope().key().value(), "retry");
                return StoredResponse.of(201, "text/plain", "retry");
            }), threads));
        }
        retries.forEach(r -> assertThat(body(r.join())).isEqualTo("retry"));
        slowMayFinish.countDown();
        slow.forEach(s -> assertThat(s.join()).isInstanceOf(GuardResult.InProgress.class)); // fenced off

        long effects = jdbc.queryForObject("SELECT count(*) FROM payout", Long.class);
        long slowEffects = jdbc.queryForObject("SELECT count(*) FROM payout WHERE claimant = 'slow'", Long.class);
        List<String> stored = jdbc.queryForList(
                "SELECT convert_from(response_body, 'UTF8') FROM idempotency_record WHERE route = ?", String.class,
                ROUTE.value());
        Summary.record(new Summary.Row("7 lease expiry races (slow handler vs retry)", RACES, RACES,
                Math.max(0, RACES - effects), Math.max(0, effects - RACES) + slowEffects, effects == RACES && slowEffects == 0,
                "every slow completion refused by its fencing token"));
        assertThat(effects).isEqualTo(RACES);
        assertThat(slowEffects).isZero();
        assertThat(stored).hasSize(RACES).containsOnly("retry");
        assertThat(body(guard.run(request("race-0"), policy, context -> {
            throw new AssertionError("a replay must not run the handler");
        }))).isEqualTo("retry");
    }

    static MutationRequest request(String key) {
        IdempotencyScope scope = IdempotencyScope.of("acme", "alice", ROUTE, key);
        return MutationRequest.of(scope, RequestFingerprint.of("POST", ROUTE, "application/json",
                "{\"amount\":100}".getBytes(StandardCharsets.UTF_8)));
    }

    static void pay(String key, String claimant) {
        jdbc.update("INSERT INTO payout (idempotency_key, claimant) VALUES (?, ?)", key, claimant);
    }

    static String body(GuardResult result) {
        assertThat(result).isInstanceOf(GuardResult.Completed.class);
        return new String(((GuardResult.Completed) result).response().body(), StandardCharsets.UTF_8);
    }
}
