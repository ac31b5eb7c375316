package dev.once.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.retention.RetentionOptions;
import dev.once.retention.RetentionRule;
import dev.once.retention.RetentionSweeper;
import dev.once.test.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Handlers' claims in their own table, one partition per day of the event's UUIDv7 time: where a claim lives, how
 * long it is kept, and the claim semantics the dispatcher relies on.
 */
class HandlerClaimStoreIT {

    static final long DAY = 86_400_000L;
    static final Route PROJECTION = Route.of("OrderPlaced:v1:projection");

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create();

    static JdbcTemplate jdbc;
    static TransactionTemplate tx;

    @BeforeAll
    static void migrate() {
        OnceMigrations.migrate(db.dataSource());
        jdbc = new JdbcTemplate(db.dataSource());
        tx = new TransactionTemplate(new DataSourceTransactionManager(db.dataSource()));
    }

    /** A UUIDv7 whose time is {@code millis} since the epoch. */
    static UUID v7(long millis) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        long msb = (millis << 16) | 0x7000L | (random.nextLong() & 0x0FFFL);
        long lsb = (random.nextLong() & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L;
        return new UUID(msb, lsb);
    }

    static long dbNow() {
        return jdbc.queryForObject("SELECT CAST(EXTRACT(EPOCH FROM statement_timestamp()) * 1000 AS bigint)", Long.class);
    }

    static IdempotencyScope scope(UUID event) {
        return IdempotencyScope.of("acme", "alice", PROJECTION, event.toString());
    }

    static String hash(String payload) {
        return RequestFingerprint.ofPayload(PROJECTION, "application/json", payload.getBytes(StandardCharsets.UTF_8));
    }

    /** The dispatcher's policy: the claim retention as the claims' TTL. */
    static ClaimPolicy retention(Duration retention) {
        return ClaimPolicy.custom().lease(Duration.ofMillis(Math.min(30_000, retention.toMillis() / 2))).ttl(retention).build();
    }

    static final ClaimPolicy WEEK = retention(ClaimPartitions.RETENTION);

    /** The partition that holds the handler's claim of {@code event}. */
    static String partitionOf(UUID event) {
        return jdbc.queryForObject("SELECT CAST(tableoid::regclass AS text) FROM once_handler_claim WHERE event_id = ?",
                String.class, event);
    }

    static boolean[] claimCompleted(HandlerClaimStore store, ClaimPolicy policy, UUID... events) {
        List<IdempotencyScope> scopes = java.util.Arrays.stream(events).map(HandlerClaimStoreIT::scope).toList();
        return tx.execute(s -> store.claimCompleted(scopes, scopes.stream().map(x -> hash("{}")).toList(), policy));
    }

    @Test
    void a_claim_is_found_by_a_redelivery_after_its_day_has_passed_and_partitions_ahead_were_created() {
        ClaimPartitions partitions = ClaimPartitions.create(db.dataSource(), ClaimPartitions.Options.ofDefaults());
        HandlerClaimStore store = HandlerClaimStore.create(db.dataSource(), partitions);
        long today = Math.floorDiv(dbNow(), DAY) * DAY;
        UUID lastOfTwoDaysAgo = v7(today - DAY - 1);
        UUID firstOfYesterday = v7(today - DAY);
        UUID firstOfToday = v7(today);

        assertThat(claimCompleted(store, WEEK, lastOfTwoDaysAgo, firstOfYesterday, firstOfToday))
                .containsExactly(true, true, true);
        partitions.maintain();

        assertThat(partitions.partitions().stream().map(ClaimPartitions.Partition::day).toList())
                .as("the days ahead, created by the round").containsSequence(java.util.stream.IntStream.rangeClosed(0,
                        ClaimPartitions.DAYS_AHEAD).mapToObj(d -> (int) (today / DAY) + d).toList());
        assertThat(List.of(partitionOf(lastOfTwoDaysAgo), partitionOf(firstOfYesterday), partitionOf(firstOfToday)))
                .containsExactly(ClaimPartitions.nameOf((int) (today / DAY) - 2),
                        ClaimPartitions.nameOf((int) (today / DAY) - 1), ClaimPartitions.nameOf((int) (today / DAY)));
        for (UUID event : List.of(lastOfTwoDaysAgo, firstOfYesterday, firstOfToday)) {
            assertThat(store.claim(scope(event), hash("{}"), WEEK))
                    .as("a redelivery of %s", event).isInstanceOf(ClaimResult.Replay.class);
        }
        assertThat(claimCompleted(store, WEEK, firstOfToday, lastOfTwoDaysAgo)).containsExactly(false, false);
    }

    /**
     * The last day whose claims are all within the retention is kept until its last instant is older than the
     * retention: a redelivery just before that instant is skipped, and one after it is a new claim, kept undated.
     */
    @Test
    void a_redelivery_just_before_the_claim_retention_ends_is_still_skipped() {
        long now = dbNow();
        long yesterdaysLast = Math.floorDiv(now, DAY) * DAY - 1;
        Duration retention = Duration.ofMillis(now - yesterdaysLast + 5_000); // its claims' retention ends in 5 s
        ClaimPartitions partitions = ClaimPartitions.create(db.dataSource(),
                ClaimPartitions.Options.ofDefaults().withRetention(retention));
        HandlerClaimStore store = HandlerClaimStore.create(db.dataSource(), partitions);
        UUID event = v7(yesterdaysLast);
        long ends = yesterdaysLast + retention.toMillis();

        ClaimResult first = store.claim(scope(event), hash("{}"), retention(retention));
        assertThat(first).isInstanceOf(ClaimResult.Claimed.class);
        assertThat(((ClaimResult.Claimed) first).token().recordId()).isEqualTo(Math.floorDiv(yesterdaysLast, DAY));
        assertThat(store.markSucceeded(((ClaimResult.Claimed) first).token())).isEqualTo(TransitionResult.APPLIED);

        long before = dbNow();
        partitions.maintain();
        ClaimResult redelivery = store.claim(scope(event), hash("{}"), retention(retention));
        long after = dbNow();
        if (after < ends) {
            assertThat(redelivery).as("redelivered %d ms before the retention ends", ends - after)
                    .isInstanceOf(ClaimResult.Replay.class);
            assertThat(partitionOf(event)).isEqualTo(ClaimPartitions.nameOf((int) Math.floorDiv(yesterdaysLast, DAY)));
        } else {
            assertThat(before).as("the day was dropped only once its retention had ended").isGreaterThanOrEqualTo(ends - 1);
        }

        await().atMost(Duration.ofSeconds(30)).until(() -> dbNow() > ends);
        assertThat(partitions.maintain().dropped()).contains((int) Math.floorDiv(yesterdaysLast, DAY));
        ClaimResult late = store.claim(scope(event), hash("{}"), retention(retention));
        assertThat(late).as("past the retention, the event is claimed anew").isInstanceOf(ClaimResult.Claimed.class);
        assertThat(((ClaimResult.Claimed) late).token().recordId()).as("undated: its day is gone").isZero();
        assertThat(partitionOf(event)).isEqualTo("once_handler_claim_undated");
    }

    @Test
    void an_event_id_that_is_not_a_uuidv7_is_claimed_undated_kept_the_retention_after_its_claim_then_swept() {
        HandlerClaimStore store = HandlerClaimStore.create(db.dataSource());
        UUID random = UUID.randomUUID();
        Duration retention = Duration.ofSeconds(2);

        ClaimResult first = store.claim(scope(random), hash("{}"), retention(retention));
        store.markSucceeded(((ClaimResult.Claimed) first).token());

        assertThat(((ClaimResult.Claimed) first).token().recordId()).isZero();
        assertThat(partitionOf(random)).isEqualTo("once_handler_claim_undated");
        assertThat(jdbc.queryForObject("SELECT kept_until - statement_timestamp() BETWEEN interval '0' AND interval '2 seconds'"
                + " FROM once_handler_claim WHERE event_id = ?", Boolean.class, random)).isTrue();
        assertThat(store.claim(scope(random), hash("{}"), retention(retention))).isInstanceOf(ClaimResult.Replay.class);

        await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                "SELECT kept_until < statement_timestamp() FROM once_handler_claim WHERE event_id = ?", Boolean.class, random));
        RetentionSweeper sweeper = new RetentionSweeper(db.dataSource(), RetentionOptions.ofDefaults(),
                List.of(RetentionRule.undatedHandlerClaims()), dev.once.retention.RetentionListener.NONE);
        assertThat(sweeper.sweep()).containsEntry("once_handler_claim_undated", 1L);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM once_handler_claim WHERE event_id = ?", Long.class, random)).isZero();
    }

    @Test
    void an_event_first_claimed_when_older_than_the_retention_is_kept_undated_the_retention_after_its_claim() {
        HandlerClaimStore store = HandlerClaimStore.create(db.dataSource());
        UUID old = v7(dbNow() - Duration.ofDays(8).toMillis());

        assertThat(claimCompleted(store, WEEK, old)).containsExactly(true);

        assertThat(partitionOf(old)).isEqualTo("once_handler_claim_undated");
        assertThat(jdbc.queryForObject("SELECT kept_until - statement_timestamp() > interval '6 days 23 hours'"
                + " FROM once_handler_claim WHERE event_id = ?", Boolean.class, old)).isTrue();
        assertThat(store.claim(scope(old), hash("{}"), WEEK)).isInstanceOf(ClaimResult.Replay.class);
    }

    @Test
    void a_day_with_no_partition_is_created_on_demand_and_said_so() {
        List<Integer> onDemand = new java.util.concurrent.CopyOnWriteArrayList<>();
        ClaimPartitions partitions = ClaimPartitions.create(db.dataSource(), ClaimPartitions.Options.ofDefaults(),
                new ClaimPartitions.Listener() {
                    @Override
                    public void created(int day, boolean demanded) {
                        if (demanded) {
                            onDemand.add(day);
                        }
                    }
                });
        HandlerClaimStore store = HandlerClaimStore.create(db.dataSource(), partitions);
        long inTenDays = dbNow() + Duration.ofDays(10).toMillis(); // beyond the days kept ahead: a producer's clock
        UUID event = v7(inTenDays);

        assertThat(claimCompleted(store, WEEK, event)).containsExactly(true);

        int day = (int) Math.floorDiv(inTenDays, DAY);
        assertThat(onDemand).containsExactly(day);
        assertThat(partitionOf(event)).isEqualTo(ClaimPartitions.nameOf(day));
    }

    @Test
    void claims_keep_the_semantics_of_the_request_store() {
        HandlerClaimStore store = HandlerClaimStore.create(db.dataSource());
        ClaimPolicy longLease = ClaimPolicy.custom().lease(Duration.ofSeconds(60)).ttl(Duration.ofDays(7)).build();
        UUID held = dev.once.outbox.UuidV7.next();
        assertThat(((ClaimResult.Claimed) store.claim(scope(held), hash("{\"a\":1}"), longLease)).kind())
                .isEqualTo(ClaimResult.Claimed.Kind.FRESH);
        assertThat(store.claim(scope(held), hash("{\"a\":1}"), longLease)).isInstanceOf(ClaimResult.InProgress.class);
        assertThat(store.claim(scope(held), hash("{\"a\":2}"), longLease))
                .as("another payload under the same event id").isInstanceOf(ClaimResult.Conflict.class);

        UUID event = dev.once.outbox.UuidV7.next();
        ClaimPolicy shortLease = ClaimPolicy.custom().lease(Duration.ofMillis(200)).ttl(Duration.ofDays(7)).build();
        ClaimResult.Claimed first = (ClaimResult.Claimed) store.claim(scope(event), hash("{\"a\":1}"), shortLease);
        ClaimResult.Claimed second = (ClaimResult.Claimed) await().atMost(Duration.ofSeconds(30)).until(
                () -> store.claim(scope(event), hash("{\"a\":1}"), shortLease), r -> r instanceof ClaimResult.Claimed);
        assertThat(second.kind()).isEqualTo(ClaimResult.Claimed.Kind.LEASE_RECLAIMED);
        assertThat(second.token().fencingToken()).isEqualTo(2);
        assertThat(store.markSucceeded(first.token())).as("the first claimant's lease lapsed").isEqualTo(TransitionResult.STALE);

        assertThat(store.markFailed(second.token(), "x".repeat(600))).isEqualTo(TransitionResult.APPLIED);
        assertThat(store.claim(scope(event), hash("{\"a\":1}"), shortLease)).isInstanceOfSatisfying(ClaimResult.Failed.class,
                f -> assertThat(f.response().bodyAsString()).hasSize(500));
        ClaimPolicy retrying = ClaimPolicy.custom().lease(Duration.ofSeconds(60)).ttl(Duration.ofDays(7)).retryFailed(true).build();
        ClaimResult.Claimed third = (ClaimResult.Claimed) store.claim(scope(event), hash("{\"a\":1}"), retrying);
        assertThat(third.kind()).isEqualTo(ClaimResult.Claimed.Kind.FAILED_RETRY);

        assertThat(store.release(third.token())).isEqualTo(TransitionResult.APPLIED);
        ClaimResult.Claimed fourth = (ClaimResult.Claimed) store.claim(scope(event), hash("{\"a\":3}"), longLease);
        assertThat(fourth.kind()).as("released: any payload may claim it").isEqualTo(ClaimResult.Claimed.Kind.EXPIRED_REUSED);
        int completed = tx.execute(s -> store.markAllSucceeded(List.of(fourth.token(), third.token())));
        assertThat(completed).as("the stale token completes nothing").isOne();
        assertThat(store.claim(scope(event), hash("{\"a\":3}"), longLease)).isInstanceOf(ClaimResult.Replay.class);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM once_handler_claim WHERE event_id = ?", Long.class, event))
                .as("one row per handler and event").isOne();
    }

    @Test
    void a_claim_rolled_back_with_its_work_leaves_nothing() {
        HandlerClaimStore store = HandlerClaimStore.create(db.dataSource());
        UUID event = dev.once.outbox.UuidV7.next();

        tx.executeWithoutResult(s -> {
            store.claimCompleted(List.of(scope(event)), List.of(hash("{}")), WEEK);
            s.setRollbackOnly();
        });

        assertThat(claimCompleted(store, WEEK, event)).containsExactly(true);
    }

    /**
     * A batch's claims meet the key one by one ({@code ON CONFLICT DO NOTHING}): a claim taken before is skipped, the
     * others are claimed, and the transaction goes on with what it wrote before the claims.
     */
    @Test
    void a_batch_with_a_claim_taken_before_claims_the_others_and_its_transaction_keeps_its_earlier_writes() {
        HandlerClaimStore store = HandlerClaimStore.create(db.dataSource());
        jdbc.execute("CREATE TABLE IF NOT EXISTS claim_effect (event_id uuid PRIMARY KEY)");
        UUID taken = dev.once.outbox.UuidV7.next();
        UUID first = dev.once.outbox.UuidV7.next();
        UUID second = dev.once.outbox.UuidV7.next();
        assertThat(claimCompleted(store, WEEK, taken)).containsExactly(true);

        boolean[] claimed = tx.execute(s -> {
            jdbc.update("INSERT INTO claim_effect VALUES (?)", first);
            return store.claimCompleted(List.of(scope(first), scope(taken), scope(second)),
                    List.of(hash("{}"), hash("{}"), hash("{}")), WEEK);
        });

        assertThat(claimed).containsExactly(true, false, true);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM claim_effect WHERE event_id = ?", Long.class, first))
                .as("written before the claims, in their transaction").isOne();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM once_handler_claim WHERE event_id IN (?, ?, ?)", Long.class,
                first, taken, second)).isEqualTo(3);
        boolean[] redelivered = tx.execute(s -> store.claimCompleted(List.of(scope(second), scope(second)),
                List.of(hash("{}"), hash("{}")), WEEK));
        assertThat(redelivered).as("a redelivery, twice in one batch").containsExactly(false, false);
    }

    @Test
    void outside_a_transaction_a_batch_with_a_claim_taken_before_claims_the_others() {
        HandlerClaimStore store = HandlerClaimStore.create(db.dataSource());
        UUID taken = dev.once.outbox.UuidV7.next();
        UUID fresh = dev.once.outbox.UuidV7.next();
        assertThat(store.claimCompleted(List.of(scope(taken)), List.of(hash("{}")), WEEK)).containsExactly(true);

        assertThat(store.claimCompleted(List.of(scope(taken), scope(fresh)), List.of(hash("{}"), hash("{}")), WEEK))
                .containsExactly(false, true);
        assertThat(store.claim(scope(fresh), hash("{}"), WEEK)).isInstanceOf(ClaimResult.Replay.class);
    }

    /**
     * Two dispatchers claim the same event at once (a rebalance): the second waits on the key until the first one's
     * transaction ends, then skips the event if it committed, or claims it if it rolled back.
     */
    @Test
    void a_concurrent_duplicate_waits_on_the_key_then_skips_a_committed_claim_or_takes_a_rolled_back_one()
            throws Exception {
        HandlerClaimStore store = HandlerClaimStore.create(db.dataSource());
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            for (boolean commit : new boolean[] {true, false}) {
                UUID event = dev.once.outbox.UuidV7.next();
                UUID other = dev.once.outbox.UuidV7.next();
                java.util.concurrent.CountDownLatch inserted = new java.util.concurrent.CountDownLatch(1);
                java.util.concurrent.CountDownLatch finish = new java.util.concurrent.CountDownLatch(1);
                java.util.concurrent.Future<boolean[]> firstClaim = pool.submit(() -> tx.execute(s -> {
                    boolean[] claimed = store.claimCompleted(List.of(scope(event)), List.of(hash("{}")), WEEK);
                    inserted.countDown();
                    try {
                        finish.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException(e);
                    }
                    if (!commit) {
                        s.setRollbackOnly();
                    }
                    return claimed;
                }));
                inserted.await();
                java.util.concurrent.CompletableFuture<Integer> backend = new java.util.concurrent.CompletableFuture<>();
                java.util.concurrent.Future<boolean[]> duplicate = pool.submit(() -> tx.execute(s -> {
                    backend.complete(jdbc.queryForObject("SELECT pg_backend_pid()", Integer.class));
                    return store.claimCompleted(List.of(scope(other), scope(event)), List.of(hash("{}"), hash("{}")), WEEK);
                }));
                int pid = backend.get();
                await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                        "SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = ?", Boolean.class, pid));
                finish.countDown();

                assertThat(firstClaim.get()).containsExactly(true);
                assertThat(duplicate.get()).as(commit ? "the key was taken" : "the key was free again")
                        .containsExactly(true, !commit);
                assertThat(jdbc.queryForObject("SELECT count(*) FROM once_handler_claim WHERE event_id IN (?, ?)",
                        Long.class, event, other)).isEqualTo(2);
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
