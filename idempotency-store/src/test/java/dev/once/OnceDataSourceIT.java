package dev.once;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.ClaimResult;
import dev.once.idempotency.IdempotencyScope;
import dev.once.idempotency.IdempotencyStore;
import dev.once.idempotency.OnceMigrations;
import dev.once.idempotency.Route;
import dev.once.idempotency.StaleClaimException;
import dev.once.idempotency.StoredResponse;
import dev.once.outbox.OutboxEvent;
import dev.once.outbox.OutboxWriter;
import dev.once.outbox.UuidV7;
import dev.once.spi.CommitStatements;
import dev.once.test.TestDatabase;
import java.sql.Connection;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * On an {@link OnceDataSource}, Once's end-of-transaction writes (outbox rows, a guarded record's completion) travel
 * with the COMMIT, and are exactly as atomic with the business change as when written at once.
 */
class OnceDataSourceIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create();

    static OnceDataSource pipelined;
    static JdbcTemplate jdbc;
    static TransactionTemplate tx;
    static OutboxWriter outbox;
    static IdempotencyStore store;

    @BeforeAll
    static void setUp() {
        OnceMigrations.migrate(db.dataSource());
        pipelined = new OnceDataSource(db.dataSource());
        jdbc = new JdbcTemplate(pipelined);
        jdbc.execute("CREATE TABLE business (id uuid PRIMARY KEY)");
        tx = new TransactionTemplate(new DataSourceTransactionManager(pipelined));
        outbox = OutboxWriter.create(pipelined);
        store = IdempotencyStore.create(pipelined);
    }

    static OutboxEvent event(UUID aggregate) {
        return OutboxEvent.builder().tenantId("acme").actorId("alice").aggregate("account", aggregate.toString())
                .type("AccountCreated", 1).payloadJson("{\"id\":\"" + aggregate + "\"}").build();
    }

    static void business(UUID id) {
        jdbc.update("INSERT INTO business (id) VALUES (?)", id);
    }

    static long rows(String table, UUID id) {
        return jdbc.queryForObject("SELECT count(*) FROM " + table + " WHERE id = ?", Long.class, id);
    }

    @Test
    void an_appended_row_is_written_by_the_commit_together_with_the_business_change() {
        UUID order = UUID.randomUUID();

        UUID event = tx.execute(s -> {
            business(order);
            UUID id = outbox.append(event(order));
            assertThat(rows("outbox_event", id)).as("not written before the commit").isZero();
            return id;
        });

        assertThat(rows("business", order)).isEqualTo(1);
        assertThat(jdbc.queryForObject("SELECT aggregate_id FROM outbox_event WHERE id = ?", String.class, event))
                .isEqualTo(order.toString());
    }

    @Test
    void several_appends_are_written_in_their_order() {
        UUID order = UUID.randomUUID();

        List<UUID> ids = tx.execute(s -> List.of(outbox.append(event(order)), outbox.append(event(order)),
                outbox.append(event(order))));

        assertThat(jdbc.queryForList("SELECT id FROM outbox_event WHERE aggregate_id = ? ORDER BY seq", UUID.class,
                order.toString())).containsExactlyElementsOf(ids);
    }

    @Test
    void a_rollback_discards_the_appended_rows() {
        UUID order = UUID.randomUUID();
        UUID[] event = new UUID[1];

        assertThatThrownBy(() -> tx.executeWithoutResult(s -> {
            business(order);
            event[0] = outbox.append(event(order));
            throw new IllegalStateException("the business change failed");
        })).hasMessageContaining("business change failed");

        assertThat(rows("business", order)).isZero();
        assertThat(rows("outbox_event", event[0])).isZero();
        UUID next = UUID.randomUUID();
        tx.executeWithoutResult(s -> business(next));
        assertThat(rows("outbox_event", event[0])).as("nothing left over for the connection's next transaction").isZero();
    }

    @Test
    void a_failing_deferred_row_fails_the_commit_and_the_business_change_rolls_back() {
        UUID existing = tx.execute(s -> outbox.append(event(UUID.randomUUID())));
        UUID order = UUID.randomUUID();

        assertThatThrownBy(() -> tx.executeWithoutResult(s -> {
            business(order);
            outbox.append(event(order).withId(existing)); // the same id again: the primary key refuses it
        })).hasRootCauseInstanceOf(java.sql.SQLException.class);

        assertThat(rows("business", order)).isZero();
        UUID after = UUID.randomUUID();
        tx.executeWithoutResult(s -> business(after));
        assertThat(rows("business", after)).as("the pooled connection is usable again").isEqualTo(1);
    }

    @Test
    void a_failing_deferred_row_rolls_the_business_change_back_even_when_the_driver_saves_it_with_autosave() {
        // pgjdbc's autosave rolls a failed statement back to a savepoint and keeps the transaction open; a later
        // commit (Spring resets auto-commit after a failed commit) must not find the business change there
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(db.jdbcUrl());
        config.setUsername(db.server().username());
        config.setPassword(db.server().password());
        config.setMaximumPoolSize(2);
        config.addDataSourceProperty("autosave", "always");
        try (HikariDataSource pool = new HikariDataSource(config)) {
            OnceDataSource autosaving = new OnceDataSource(pool);
            TransactionTemplate autosaveTx = new TransactionTemplate(new DataSourceTransactionManager(autosaving));
            OutboxWriter writer = OutboxWriter.create(autosaving);
            JdbcTemplate autosaveJdbc = new JdbcTemplate(autosaving);
            UUID existing = autosaveTx.execute(s -> writer.append(event(UUID.randomUUID())));
            UUID order = UUID.randomUUID();

            assertThatThrownBy(() -> autosaveTx.executeWithoutResult(s -> {
                autosaveJdbc.update("INSERT INTO business (id) VALUES (?)", order);
                writer.append(event(order).withId(existing));
            })).hasRootCauseInstanceOf(java.sql.SQLException.class);

            assertThat(rows("business", order)).isZero();
        }
    }

    @Test
    void rolling_back_to_a_savepoint_discards_only_the_rows_appended_after_it() {
        UUID order = UUID.randomUUID();
        TransactionTemplate nested = new TransactionTemplate(tx.getTransactionManager());
        nested.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
        UUID[] inner = new UUID[1];

        UUID outer = tx.execute(s -> {
            UUID kept = outbox.append(event(order));
            assertThatThrownBy(() -> nested.executeWithoutResult(n -> {
                inner[0] = outbox.append(event(order));
                throw new IllegalStateException("the nested step failed");
            })).hasMessageContaining("nested step failed");
            return kept;
        });

        assertThat(rows("outbox_event", outer)).isEqualTo(1);
        assertThat(rows("outbox_event", inner[0])).isZero();
    }

    @Test
    void switching_auto_commit_on_commits_the_deferred_statements_too() throws Exception {
        UUID id = UUID.randomUUID();
        try (Connection c = pipelined.getConnection()) {
            c.setAutoCommit(false);
            assertThat(CommitStatements.defer(c, "INSERT INTO business (id) VALUES (?)", (ps, first) -> {
                ps.setObject(first, id);
                return first + 1;
            })).isTrue();
            c.setAutoCommit(true);
        }

        assertThat(rows("business", id)).isEqualTo(1);
    }

    @Test
    void nothing_is_deferred_on_a_plain_connection_or_in_auto_commit_mode() throws Exception {
        try (Connection plain = db.dataSource().getConnection(); Connection auto = pipelined.getConnection()) {
            plain.setAutoCommit(false);
            assertThat(CommitStatements.defer(plain, "SELECT 1", (ps, first) -> first)).isFalse();
            plain.rollback();
            assertThat(CommitStatements.defer(auto, "SELECT 1", (ps, first) -> first)).isFalse();
        }
    }

    @Test
    void a_completion_sent_with_the_commit_commits_the_record_its_events_and_the_work_together() {
        var claimed = claim();
        UUID order = UUID.randomUUID();
        OutboxEvent created = event(order).withId(UuidV7.next());

        tx.executeWithoutResult(s -> {
            business(order);
            store.markSucceededAtCommit(claimed.token(), StoredResponse.of(201, "application/json", "{}"), "task-1",
                    List.of(created));
        });

        assertThat(rows("business", order)).isEqualTo(1);
        assertThat(rows("outbox_event", created.id())).isEqualTo(1);
        var replay = (ClaimResult.Replay) store.claim(claimed.token().scope(), "v1:x", ClaimPolicy.ofDefaults());
        assertThat(replay.outboxEventId()).isEqualTo(created.id());
        assertThat(replay.taskId()).isEqualTo("task-1");
    }

    @Test
    void several_events_of_a_completion_sent_with_the_commit_are_written_in_their_order_and_the_first_is_bound() {
        var claimed = claim();
        UUID order = UUID.randomUUID();
        List<OutboxEvent> events = List.of(event(order).withId(UuidV7.next()), event(order).withId(UuidV7.next()),
                event(order).withId(UuidV7.next()));

        tx.executeWithoutResult(s -> store.markSucceededAtCommit(claimed.token(),
                StoredResponse.of(201, "application/json", "{}"), null, events));

        assertThat(jdbc.queryForList("SELECT id FROM outbox_event WHERE aggregate_id = ? ORDER BY seq", UUID.class,
                order.toString())).containsExactlyElementsOf(events.stream().map(OutboxEvent::id).toList());
        assertThat(jdbc.queryForObject("SELECT outbox_event_id FROM idempotency_record WHERE id = ?", UUID.class,
                claimed.token().recordId())).isEqualTo(events.get(0).id());
    }

    @Test
    void a_stale_claim_sent_with_the_commit_fails_the_commit_and_nothing_of_the_transaction_stays() {
        var claimed = claim();
        store.release(claimed.token()); // as if the lease lapsed and another request took the key over
        UUID order = UUID.randomUUID();
        OutboxEvent created = event(order).withId(UuidV7.next());

        assertThatThrownBy(() -> tx.executeWithoutResult(s -> {
            business(order);
            store.markSucceededAtCommit(claimed.token(), StoredResponse.of(201, "application/json", "{}"), null,
                    List.of(created));
        })).satisfies(e -> assertThat(StaleClaimException.isCause(e)).as("recognised by SQLState").isTrue());

        assertThat(rows("business", order)).isZero();
        assertThat(rows("outbox_event", created.id())).isZero();
        assertThat(jdbc.queryForObject("SELECT status FROM idempotency_record WHERE id = ?", String.class,
                claimed.token().recordId())).isEqualTo("expired");
    }

    @Test
    void without_pipelining_a_stale_completion_is_refused_at_once() {
        IdempotencyStore plain = IdempotencyStore.create(db.dataSource());
        var claimed = claim();
        plain.release(claimed.token());
        TransactionTemplate plainTx = new TransactionTemplate(new DataSourceTransactionManager(db.dataSource()));

        assertThatThrownBy(() -> plainTx.executeWithoutResult(s -> plain.markSucceededAtCommit(claimed.token(),
                StoredResponse.of(201, "application/json", "{}"), null, List.of())))
                .isInstanceOf(StaleClaimException.class);
    }

    private static ClaimResult.Claimed claim() {
        IdempotencyScope scope = IdempotencyScope.of("acme", "alice", Route.http("POST", "/accounts"),
                UUID.randomUUID().toString());
        return (ClaimResult.Claimed) store.claim(scope, "v1:x", ClaimPolicy.ofDefaults());
    }
}
