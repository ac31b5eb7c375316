package dev.once.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.test.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** Several instances keep the partitions of one table, while claims are written. */
class ClaimPartitionsIT {

    static final long DAY = 86_400_000L;

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create();

    static JdbcTemplate jdbc;

    @BeforeAll
    static void migrate() {
        OnceMigrations.migrate(db.dataSource());
        jdbc = new JdbcTemplate(db.dataSource());
    }

    static int today() {
        return jdbc.queryForObject("SELECT CAST(EXTRACT(EPOCH FROM statement_timestamp()) * 1000 AS bigint) / 86400000",
                Integer.class);
    }

    static List<Integer> days(ClaimPartitions partitions) {
        return partitions.partitions().stream().map(ClaimPartitions.Partition::day).toList();
    }

    /** An old day's partition with claims in it, as a service that ran then left it. */
    static void oldDayWithClaims(int day, int claims) {
        jdbc.execute("CREATE TABLE " + ClaimPartitions.nameOf(day) + " PARTITION OF once_handler_claim FOR VALUES FROM ("
                + day + ") TO (" + (day + 1) + ")");
        jdbc.update("""
                INSERT INTO once_handler_claim (route_id, day, event_id, status, tenant_id, actor_id, payload_hash)
                SELECT 1, ?, gen_random_uuid(), 2, 'acme', 'alice', '\\x00' FROM generate_series(1, ?)
                """, day, claims);
    }

    @Test
    void two_instances_keep_partitions_at_the_same_time_without_an_error() throws Exception {
        int today = today();
        oldDayWithClaims(today - 30, 1_000);
        oldDayWithClaims(today - 31, 1_000);
        try (HikariDataSource one = TestDatabase.newDataSource(db.schema(), 4, null);
             HikariDataSource two = TestDatabase.newDataSource(db.schema(), 4, null)) {
            List<ClaimPartitions> instances = List.of(
                    ClaimPartitions.create(one, ClaimPartitions.Options.ofDefaults()),
                    ClaimPartitions.create(two, ClaimPartitions.Options.ofDefaults()));
            CyclicBarrier start = new CyclicBarrier(2);
            List<CompletableFuture<List<Object>>> rounds = new ArrayList<>(); // each instance's rounds, or failures
            for (ClaimPartitions instance : instances) {
                rounds.add(CompletableFuture.supplyAsync(() -> {
                    List<Object> done = new ArrayList<>();
                    for (int i = 0; i < 5; i++) {
                        try {
                            start.await(60, TimeUnit.SECONDS);
                        } catch (Exception e) {
                            throw new IllegalStateException("the other instance did not come to round " + i, e);
                        }
                        try {
                            done.add(instance.maintain());
                        } catch (RuntimeException e) { // kept, and the rounds go on: the other instance waits for them
                            done.add(e);
                        }
                    }
                    return done;
                }));
            }
            List<ClaimPartitions.Round> all = new ArrayList<>();
            for (CompletableFuture<List<Object>> r : rounds) {
                assertThat(r.get(180, TimeUnit.SECONDS)).as("every round of each instance, none failed")
                        .allSatisfy(round -> assertThat(round).isInstanceOf(ClaimPartitions.Round.class));
                r.join().forEach(round -> all.add((ClaimPartitions.Round) round));
            }

            assertThat(all.stream().flatMap(r -> r.created().stream()).toList()).as("no day created twice")
                    .doesNotHaveDuplicates();
            assertThat(days(instances.get(0))).containsExactlyElementsOf(java.util.stream.IntStream.concat(
                    java.util.stream.IntStream.of(0), java.util.stream.IntStream.rangeClosed(today,
                            today + ClaimPartitions.DAYS_AHEAD)).boxed().toList());
            assertThat(instances.get(0).status().failure()).isNull();
            assertThat(instances.get(1).status().failure()).isNull();
            assertThat(jdbc.queryForObject("SELECT count(*) FROM pg_class WHERE relname LIKE 'once_handler_claim_2%'"
                    + " AND relkind = 'r' AND relnamespace = current_schema()::regnamespace", Long.class))
                    .as("the old days' tables are gone, not only detached").isEqualTo(ClaimPartitions.DAYS_AHEAD + 1);
        }
    }

    @Test
    void writes_go_on_while_a_partition_is_detached_and_dropped() throws Exception {
        int today = today();
        oldDayWithClaims(today - 40, 50_000);
        ClaimPartitions partitions = ClaimPartitions.create(db.dataSource(), ClaimPartitions.Options.ofDefaults());
        HandlerClaimStore store = HandlerClaimStore.create(db.dataSource(), partitions);
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(db.dataSource()));
        Route route = Route.of("OrderPlaced:v1:writer");
        AtomicBoolean writing = new AtomicBoolean(true);
        AtomicLong written = new AtomicLong();
        List<UUID> events = java.util.Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            while (writing.get() || written.get() < 200) {
                List<UUID> poll = java.util.stream.Stream.generate(dev.once.outbox.UuidV7::next).limit(20).toList();
                List<IdempotencyScope> scopes = poll.stream()
                        .map(e -> IdempotencyScope.of("acme", "alice", route, e.toString())).toList();
                boolean[] fresh = tx.execute(s -> store.claimCompleted(scopes,
                        scopes.stream().map(x -> "v1:payload").toList(), ClaimPolicy.ofDefaults()));
                for (boolean f : fresh) {
                    assertThat(f).isTrue();
                }
                events.addAll(poll);
                written.addAndGet(poll.size());
            }
        });
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> written.get() >= 100);

        ClaimPartitions.Round round = partitions.maintain();
        writing.set(false);
        writer.get(60, TimeUnit.SECONDS); // a claim that failed would throw here

        assertThat(round.dropped()).contains(today - 40);
        assertThat(days(partitions)).doesNotContain(today - 40);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM once_handler_claim c JOIN once_handler_route r"
                + " ON r.id = c.route_id WHERE r.route = ?", Long.class, route.value())).isEqualTo(events.size());
    }

    /** Transaction locks and statements only: nothing of it needs a session of its own. */
    @Test
    void through_a_pooler_in_transaction_mode_claims_are_made_and_days_kept() throws Exception {
        int today = today();
        oldDayWithClaims(today - 50, 100);
        try (dev.once.test.PgBouncer bouncer = dev.once.test.PgBouncer.start(db.server(), db.schema());
             HikariDataSource pooled = pooled(bouncer)) {
            List<ClaimPartitions> instances = List.of(ClaimPartitions.create(pooled, ClaimPartitions.Options.ofDefaults()),
                    ClaimPartitions.create(pooled, ClaimPartitions.Options.ofDefaults()));
            List<CompletableFuture<ClaimPartitions.Round>> rounds = instances.stream()
                    .map(p -> CompletableFuture.supplyAsync(p::maintain)).toList();
            for (CompletableFuture<ClaimPartitions.Round> round : rounds) {
                round.get(60, TimeUnit.SECONDS);
            }
            // a detach the other instance had under way is finished by a later round
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
                instances.get(0).maintain();
                return !days(instances.get(0)).contains(today - 50);
            });

            HandlerClaimStore store = HandlerClaimStore.create(pooled, instances.get(1));
            TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(pooled));
            Route route = Route.of("OrderPlaced:v1:pooled");
            UUID transactional = dev.once.outbox.UuidV7.next();
            UUID leased = dev.once.outbox.UuidV7.next();
            IdempotencyScope first = IdempotencyScope.of("acme", "alice", route, transactional.toString());
            IdempotencyScope second = IdempotencyScope.of("acme", "alice", route, leased.toString());
            boolean[] fresh = tx.execute(s -> store.claimCompleted(List.of(first), List.of("v1:a"), ClaimPolicy.ofDefaults()));
            assertThat(fresh).containsExactly(true);
            ClaimResult.Claimed claimed = (ClaimResult.Claimed) store.claim(second, "v1:b", ClaimPolicy.ofDefaults());
            assertThat(store.markSucceeded(claimed.token())).isEqualTo(TransitionResult.APPLIED);

            assertThat(store.claim(first, "v1:a", ClaimPolicy.ofDefaults())).isInstanceOf(ClaimResult.Replay.class);
            assertThat(store.claim(second, "v1:b", ClaimPolicy.ofDefaults())).isInstanceOf(ClaimResult.Replay.class);
            assertThat(days(instances.get(0))).doesNotContain(today - 50).contains(today, today + ClaimPartitions.DAYS_AHEAD);
        }
    }

    static HikariDataSource pooled(dev.once.test.PgBouncer bouncer) {
        com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
        config.setJdbcUrl(bouncer.jdbcUrl());
        config.setUsername(db.server().username());
        config.setPassword(db.server().password());
        config.setMaximumPoolSize(6);
        return new HikariDataSource(config);
    }
}
