package dev.once.retention;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.ClaimResult.Claimed;
import dev.once.idempotency.Diagnosis;
import dev.once.idempotency.IdempotencyOperations;
import dev.once.idempotency.IdempotencyScope;
import dev.once.idempotency.IdempotencyStore;
import dev.once.idempotency.OnceMigrations;
import dev.once.idempotency.RequestFingerprint;
import dev.once.idempotency.Route;
import dev.once.outbox.OutboxEvent;
import dev.once.outbox.OutboxWriter;
import dev.once.test.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The retention sweep: what each rule deletes and what it never does, in bounded batches, one instance per table at a
 * time, measured on every instance. Rows are placed in time with SQL (their expiry or publication moved into the
 * past) rather than by waiting.
 */
class RetentionSweeperIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(8);

    static final Route HTTP = Route.http("POST", "/accounts");
    static final Route HANDLER = Route.of("OrderPlaced:v1:projection");
    static final Duration GRACE = Duration.ofHours(1);

    IdempotencyStore store;
    JdbcTemplate jdbc;

    @BeforeEach
    void empty() {
        OnceMigrations.migrate(db.dataSource());
        store = IdempotencyStore.create(db.dataSource());
        jdbc = new JdbcTemplate(db.dataSource());
        jdbc.update("DELETE FROM idempotency_record");
        jdbc.update("DELETE FROM outbox_event");
    }

    @Test
    void records_past_their_expiry_and_the_grace_are_deleted_and_nothing_else() {
        List<IdempotencyScope> due = completed(5, HTTP, ClaimPolicy.ofDefaults());
        expiredAgo(due, Duration.ofHours(2));
        List<IdempotencyScope> inGrace = completed(3, HTTP, ClaimPolicy.ofDefaults());
        expiredAgo(inGrace, Duration.ofMinutes(10));
        List<IdempotencyScope> live = completed(4, HTTP, ClaimPolicy.ofDefaults());
        IdempotencyScope leased = claimed(HTTP, ClaimPolicy.ofDefaults());
        expiredAgo(List.of(leased), Duration.ofHours(2));
        jdbc.update("UPDATE idempotency_record SET locked_until = now() + interval '1 hour' WHERE idempotency_key = ?",
                leased.key().value());

        Map<String, Long> swept = sweeper(RetentionOptions.ofDefaults()).sweep();

        assertThat(swept).containsExactly(Map.entry("idempotency_record", 5L));
        assertThat(keys()).containsExactlyInAnyOrderElementsOf(keysOf(inGrace, live, List.of(leased)));
        assertThat(IdempotencyOperations.create(db.dataSource()).diagnose(inGrace.get(0), null).state())
                .as("within the grace, diagnose still says what became of it").isEqualTo(Diagnosis.State.EXPIRED_REUSABLE);
    }

    @Test
    void handler_claims_are_kept_for_their_own_retention_long_after_the_request_ttl() {
        ClaimPolicy claimRetention = ClaimPolicy.custom().ttl(Duration.ofDays(7)).build();
        List<IdempotencyScope> claims = completed(3, HANDLER, claimRetention);
        jdbc.update("UPDATE idempotency_record SET created_at = now() - interval '3 days', "
                + "expires_at = expires_at - interval '3 days' WHERE route = ?", HANDLER.value());
        List<IdempotencyScope> requests = completed(2, HTTP, ClaimPolicy.ofDefaults());
        expiredAgo(requests, Duration.ofHours(2)); // a 24-hour request TTL, three days ago

        RetentionSweeper sweeper = sweeper(RetentionOptions.ofDefaults());
        sweeper.sweep();
        assertThat(keys()).as("three days into a seven-day retention").containsExactlyInAnyOrderElementsOf(keysOf(claims));

        expiredAgo(claims, Duration.ofHours(2));
        sweeper.sweep();
        assertThat(keys()).as("past the claim retention and the grace").isEmpty();
    }

    @Test
    void published_outbox_rows_are_deleted_past_the_retention_and_pending_or_parked_rows_never() {
        OutboxWriter writer = OutboxWriter.create(db.dataSource());
        List<UUID> old = append(writer, 4);
        List<UUID> recent = append(writer, 2);
        List<UUID> pending = append(writer, 3);
        List<UUID> parked = append(writer, 1);
        published(old, Duration.ofDays(2));
        published(recent, Duration.ofHours(1));
        jdbc.update("UPDATE outbox_event SET parked_at = now() - interval '30 days', park_reason = 'refused', "
                + "created_at = now() - interval '30 days' WHERE id = ANY(?::uuid[])", (Object) ids(parked));

        Map<String, Long> swept = new RetentionSweeper(db.dataSource(), RetentionOptions.ofDefaults(),
                List.of(RetentionRule.publishedOutboxEvents(Duration.ofDays(1))), RetentionListener.NONE).sweep();

        assertThat(swept).containsExactly(Map.entry("outbox_event", 4L));
        assertThat(jdbc.queryForList("SELECT id FROM outbox_event", UUID.class))
                .containsExactlyInAnyOrderElementsOf(concat(recent, pending, parked));
    }

    @Test
    void a_backlog_is_deleted_in_bounded_batches_until_none_is_due() {
        expiredAgo(completed(25, HTTP, ClaimPolicy.ofDefaults()), Duration.ofHours(2));
        List<Integer> batches = Collections.synchronizedList(new ArrayList<>());
        List<Duration> overdue = Collections.synchronizedList(new ArrayList<>());
        RetentionListener listener = new RetentionListener() {
            @Override
            public void swept(String table, int rows) {
                batches.add(rows);
            }

            @Override
            public void overdue(String table, Duration age) {
                overdue.add(age);
            }
        };

        new RetentionSweeper(db.dataSource(), RetentionOptions.ofDefaults().withBatch(10, Duration.ofMillis(5)),
                List.of(RetentionRule.idempotencyRecords(GRACE)), listener).sweep();

        assertThat(batches).containsExactly(10, 10, 5);
        assertThat(overdue).containsExactly(Duration.ZERO);
    }

    @Test
    void one_instance_sweeps_a_table_at_a_time_and_every_instance_measures_how_far_behind_it_is() throws Exception {
        List<IdempotencyScope> due = completed(6, HTTP, ClaimPolicy.ofDefaults());
        expiredAgo(due, Duration.ofHours(3)); // due for two hours
        OutboxWriter writer = OutboxWriter.create(db.dataSource());
        published(append(writer, 2), Duration.ofDays(2));
        RetentionSweeper other = new RetentionSweeper(db.dataSource(), RetentionOptions.ofDefaults(),
                List.of(RetentionRule.idempotencyRecords(GRACE), RetentionRule.publishedOutboxEvents(Duration.ofDays(1))),
                RetentionListener.NONE);

        try (Connection sweeping = db.dataSource().getConnection()) {
            sweeping.setAutoCommit(false);
            holdLock(sweeping, "idempotency_record"); // another instance is in a batch of idempotency_record

            assertThat(other.sweep()).as("the outbox rule has a lock of its own")
                    .containsExactly(Map.entry("idempotency_record", 0L), Map.entry("outbox_event", 2L));
            assertThat(keys()).hasSize(6);
            assertThat(other.status().get(0).overdue()).isBetween(Duration.ofMinutes(119), Duration.ofMinutes(121));
            sweeping.rollback(); // its batch ends, and its transaction's lock with it
            sweeping.setAutoCommit(true);
        }

        assertThat(other.sweep()).containsEntry("idempotency_record", 6L);
        assertThat(other.status()).extracting(RetentionSweeper.TableStatus::overdue).containsOnly(Duration.ZERO);
    }

    @Test
    void sweepers_racing_over_one_backlog_delete_each_row_once() throws Exception {
        List<IdempotencyScope> due = completed(600, HTTP, ClaimPolicy.ofDefaults());
        expiredAgo(due, Duration.ofHours(2));
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Callable<Long>> instances = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                RetentionSweeper instance = sweeper(RetentionOptions.ofDefaults().withBatch(25, Duration.ZERO));
                instances.add(() -> instance.sweep().get("idempotency_record"));
            }
            long total = 0;
            for (Future<Long> f : pool.invokeAll(instances)) {
                total += f.get();
            }
            assertThat(total).isEqualTo(600);
        } finally {
            pool.shutdownNow();
        }
        assertThat(keys()).isEmpty();
    }

    @Test
    void started_it_sweeps_by_itself_every_interval() {
        RetentionSweeper sweeper = sweeper(RetentionOptions.ofDefaults().withInterval(Duration.ofMillis(200)));
        sweeper.start();
        try {
            expiredAgo(completed(3, HTTP, ClaimPolicy.ofDefaults()), Duration.ofHours(2));
            await().atMost(Duration.ofSeconds(20)).until(() -> keys().isEmpty());
        } finally {
            sweeper.close();
        }
    }

    private RetentionSweeper sweeper(RetentionOptions options) {
        return new RetentionSweeper(db.dataSource(), options, List.of(RetentionRule.idempotencyRecords(GRACE)),
                RetentionListener.NONE);
    }

    private static void holdLock(Connection connection, String table) throws Exception {
        try (PreparedStatement lock = connection.prepareStatement(RetentionSweeper.TRY_LOCK)) {
            lock.setInt(1, RetentionSweeper.LOCK_SPACE);
            lock.setString(2, table);
            try (var rs = lock.executeQuery()) {
                assertThat(rs.next() && rs.getBoolean(1)).isTrue();
            }
        }
    }

    private List<IdempotencyScope> completed(int n, Route route, ClaimPolicy policy) {
        List<IdempotencyScope> scopes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            IdempotencyScope scope = claimed(route, policy);
            scopes.add(scope);
        }
        for (IdempotencyScope scope : scopes) {
            jdbc.update("UPDATE idempotency_record SET status = 'succeeded', locked_until = NULL, response_code = 201 "
                    + "WHERE idempotency_key = ?", scope.key().value());
        }
        return scopes;
    }

    private IdempotencyScope claimed(Route route, ClaimPolicy policy) {
        IdempotencyScope scope = IdempotencyScope.of("acme", "alice", route, UUID.randomUUID().toString());
        assertThat(store.claim(scope, RequestFingerprint.of("POST", route, "application/json", "{}".getBytes(UTF_8)), policy))
                .isInstanceOf(Claimed.class);
        return scope;
    }

    private void expiredAgo(List<IdempotencyScope> scopes, Duration ago) {
        for (IdempotencyScope scope : scopes) {
            jdbc.update("UPDATE idempotency_record SET expires_at = now() - CAST(? AS bigint) * interval '1 millisecond' "
                    + "WHERE idempotency_key = ?", ago.toMillis(), scope.key().value());
        }
    }

    private void published(List<UUID> events, Duration ago) {
        jdbc.update("UPDATE outbox_event SET published_at = now() - CAST(? AS bigint) * interval '1 millisecond' "
                + "WHERE id = ANY(?::uuid[])", ago.toMillis(), ids(events));
    }

    private static List<UUID> append(OutboxWriter writer, int n) {
        List<UUID> ids = new ArrayList<>();
        new TransactionTemplate(new DataSourceTransactionManager(db.dataSource())).executeWithoutResult(tx -> {
            for (int i = 0; i < n; i++) {
                ids.add(writer.append(OutboxEvent.builder().tenantId("acme").actorId("alice").aggregate("order", "o-" + i)
                        .type("OrderPlaced", 1).payloadJson("{}").build()));
            }
        });
        return ids;
    }

    private List<String> keys() {
        return jdbc.queryForList("SELECT idempotency_key FROM idempotency_record", String.class);
    }

    @SafeVarargs
    private static List<String> keysOf(List<IdempotencyScope>... groups) {
        List<String> keys = new ArrayList<>();
        for (List<IdempotencyScope> group : groups) {
            group.forEach(s -> keys.add(s.key().value()));
        }
        return keys;
    }

    @SafeVarargs
    private static List<UUID> concat(List<UUID>... groups) {
        List<UUID> all = new ArrayList<>();
        for (List<UUID> group : groups) {
            all.addAll(group);
        }
        return all;
    }

    private static String ids(List<UUID> ids) {
        return "{" + String.join(",", ids.stream().map(UUID::toString).toList()) + "}";
    }
}
