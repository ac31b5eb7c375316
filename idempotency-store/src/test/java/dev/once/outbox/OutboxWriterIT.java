package dev.once.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.idempotency.OnceMigrations;
import dev.once.test.TestDatabase;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** Outbox rows exist exactly when the transaction that wrote them commits. */
class OutboxWriterIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create();

    static OutboxWriter writer;
    static TransactionTemplate tx;
    static JdbcTemplate jdbc;

    @BeforeAll
    static void migrate() {
        OnceMigrations.migrate(db.dataSource());
        writer = OutboxWriter.create(db.dataSource());
        tx = new TransactionTemplate(new DataSourceTransactionManager(db.dataSource()));
        jdbc = new JdbcTemplate(db.dataSource());
    }

    static OutboxEvent accountCreated(String id) {
        return OutboxEvent.builder().tenantId("acme").actorId("alice").aggregate("account", id)
                .type("AccountCreated", 1).payload(Map.of("id", id, "name", "Ada"))
                .header("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").build();
    }

    @Test
    void append_outside_a_transaction_is_refused_and_writes_nothing() {
        long before = count();

        assertThatThrownBy(() -> writer.append(accountCreated("a-1")))
                .isInstanceOf(OutboxTransactionException.class).hasMessageContaining("needs an active transaction");
        assertThat(count()).isEqualTo(before);
    }

    @Test
    void an_appended_row_commits_with_the_transaction_and_carries_every_field() {
        UUID id = tx.execute(s -> writer.append(accountCreated("a-2")));

        Map<String, Object> row = jdbc.queryForMap("SELECT * FROM outbox_event WHERE id = ?", id);
        assertThat(row).containsEntry("tenant_id", "acme").containsEntry("actor_id", "alice")
                .containsEntry("aggregate_type", "account").containsEntry("aggregate_id", "a-2")
                .containsEntry("event_type", "AccountCreated").containsEntry("event_version", 1);
        assertThat(jdbc.queryForObject("SELECT convert_from(payload, 'UTF8')::jsonb ->> 'name' FROM outbox_event WHERE id = ?", String.class, id))
                .isEqualTo("Ada");
        assertThat(jdbc.queryForObject("SELECT headers ->> 'traceparent' FROM outbox_event WHERE id = ?", String.class, id))
                .startsWith("00-4bf92f35");
        assertThat(id.version()).isEqualTo(7);
    }

    @Test
    void an_appended_row_rolls_back_with_the_transaction() {
        UUID[] id = new UUID[1];

        assertThatThrownBy(() -> tx.executeWithoutResult(s -> {
            id[0] = writer.append(accountCreated("a-3"));
            throw new IllegalStateException("the business change failed");
        })).hasMessageContaining("business change failed");

        assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE id = ?", Long.class, id[0])).isZero();
    }

    @Test
    void a_transaction_on_another_data_source_is_refused() {
        try (var other = TestDatabase.newDataSource(db.schema(), 2, null)) {
            TransactionTemplate foreign = new TransactionTemplate(new DataSourceTransactionManager(other));

            assertThatThrownBy(() -> foreign.executeWithoutResult(s -> writer.append(accountCreated("a-4"))))
                    .isInstanceOf(OutboxTransactionException.class).hasMessageContaining("does not hold a connection");
        }
    }

    @Test
    void completing_a_claim_with_events_writes_them_and_binds_the_first_in_one_transaction() {
        dev.once.idempotency.IdempotencyStore store = dev.once.idempotency.IdempotencyStore.create(db.dataSource());
        var scope = dev.once.idempotency.IdempotencyScope.of("acme", "alice",
                dev.once.idempotency.Route.http("POST", "/accounts"), UUID.randomUUID().toString());
        var claimed = (dev.once.idempotency.ClaimResult.Claimed) store.claim(scope, "v1:x",
                dev.once.idempotency.ClaimPolicy.ofDefaults());
        OutboxEvent first = accountCreated("a-5").withId(UuidV7.next());
        OutboxEvent second = accountCreated("a-5").withId(UuidV7.next());

        var result = tx.execute(s -> store.markSucceededWithEvents(claimed.token(),
                dev.once.idempotency.StoredResponse.of(201, "application/json", "{}"), "task-1", List.of(first, second)));

        assertThat(result).isEqualTo(dev.once.idempotency.TransitionResult.APPLIED);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE aggregate_id = 'a-5'", Long.class)).isEqualTo(2);
        assertThat(jdbc.queryForObject("SELECT outbox_event_id FROM idempotency_record WHERE id = ?", UUID.class,
                claimed.token().recordId())).isEqualTo(first.id());
        var replay = (dev.once.idempotency.ClaimResult.Replay) store.claim(scope, "v1:x",
                dev.once.idempotency.ClaimPolicy.ofDefaults());
        assertThat(replay.outboxEventId()).isEqualTo(first.id());
        assertThat(replay.taskId()).isEqualTo("task-1");
    }

    @Test
    void completing_a_stale_claim_with_events_writes_no_event() {
        dev.once.idempotency.IdempotencyStore store = dev.once.idempotency.IdempotencyStore.create(db.dataSource());
        var scope = dev.once.idempotency.IdempotencyScope.of("acme", "alice",
                dev.once.idempotency.Route.http("POST", "/accounts"), UUID.randomUUID().toString());
        var claimed = (dev.once.idempotency.ClaimResult.Claimed) store.claim(scope, "v1:x",
                dev.once.idempotency.ClaimPolicy.ofDefaults());
        store.release(claimed.token());
        OutboxEvent event = accountCreated("a-stale").withId(UuidV7.next());

        var result = store.markSucceededWithEvents(claimed.token(),
                dev.once.idempotency.StoredResponse.of(201, "application/json", "{}"), null, List.of(event)); // no transaction: autocommit, and still nothing may be written

        assertThat(result).isEqualTo(dev.once.idempotency.TransitionResult.STALE);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE id = ?", Long.class, event.id())).isZero();
    }

    @Test
    void payloads_must_be_json_and_required_fields_present() {
        assertThatThrownBy(() -> OutboxEvent.builder().tenantId("t").actorId("a").aggregate("x", "1").type("T", 1)
                .payloadJson("{not json").build()).hasMessageContaining("payload is not JSON");
        for (String notOneDocument : List.of("", "  ", "{} {}", "[1] 2")) {
            assertThatThrownBy(() -> OutboxEvent.builder().tenantId("t").actorId("a").aggregate("x", "1").type("T", 1)
                    .payloadJson(notOneDocument).build()).as("'%s'", notOneDocument).hasMessageContaining("payload is not JSON");
        }
        assertThat(OutboxEvent.builder().tenantId("t").actorId("a").aggregate("x", "1").type("T", 1)
                .payloadJson(" {\"a\": [1, {\"b\": null}]} ").build().payloadText()).isEqualTo(" {\"a\": [1, {\"b\": null}]} ");
        assertThatThrownBy(() -> OutboxEvent.builder().actorId("a").aggregate("x", "1").type("T", 1).payloadJson("{}").build())
                .hasMessageContaining("tenantId is required");
    }

    @Test
    void ids_are_time_ordered_and_unique() {
        List<UUID> ids = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            ids.add(UuidV7.next());
        }
        assertThat(ids).doesNotHaveDuplicates().isSortedAccordingTo(UUID::compareTo);
    }

    private static long count() {
        return jdbc.queryForObject("SELECT count(*) FROM outbox_event", Long.class);
    }
}
