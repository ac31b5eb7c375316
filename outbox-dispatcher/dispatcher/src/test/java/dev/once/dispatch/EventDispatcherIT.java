package dev.once.dispatch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.HandlerClaimStore;
import dev.once.idempotency.OnceMigrations;
import dev.once.test.TestDatabase;
import dev.once.wire.RecordSigning;
import dev.once.wire.WireFormat;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/** The dispatcher's claim semantics per handler mode, driven record by record on a real PostgreSQL. */
class EventDispatcherIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(6);

    static JdbcTemplate jdbc;
    static HandlerClaimStore store;

    /** Stands for a process dying mid-handler: not an Exception, so nothing in the dispatcher handles it. */
    static final class SimulatedCrash extends Error {
        SimulatedCrash() {
            super("the process died here");
        }
    }

    @BeforeAll
    static void setUp() {
        OnceMigrations.migrate(db.dataSource());
        jdbc = new JdbcTemplate(db.dataSource());
        jdbc.execute("CREATE TABLE outbound (derived_key text NOT NULL)");
        jdbc.execute("CREATE TABLE projection (event_id uuid NOT NULL)");
        store = HandlerClaimStore.create(db.dataSource());
    }

    static ConsumerRecord<String, byte[]> record(UUID id, String payload) {
        ConsumerRecord<String, byte[]> record = new ConsumerRecord<>("orders", 0, 0, "o-1", payload.getBytes(StandardCharsets.UTF_8));
        record.headers().add(WireFormat.EVENT_ID, id.toString().getBytes(StandardCharsets.UTF_8));
        record.headers().add(WireFormat.TENANT_ID, "acme".getBytes(StandardCharsets.UTF_8));
        record.headers().add(WireFormat.ACTOR_ID, "alice".getBytes(StandardCharsets.UTF_8));
        record.headers().add(WireFormat.EVENT_TYPE, "OrderPlaced".getBytes(StandardCharsets.UTF_8));
        record.headers().add(WireFormat.EVENT_VERSION, "1".getBytes(StandardCharsets.UTF_8));
        return record;
    }

    @Test
    void a_binary_event_reaches_its_handler_byte_for_byte_and_its_redelivery_is_skipped() {
        byte[] protobuf = {0x0a, 0x00, 0x12, (byte) 0xff, 0x00};
        List<HandledEvent> handled = new java.util.ArrayList<>();
        EventDispatcher dispatcher = new EventDispatcher(store, new DataSourceTransactionManager(db.dataSource()),
                List.of(HandlerRegistration.transactional("OrderPlaced", 1, "binary", handled::add)),
                ClaimPolicy.ofDefaults(), RecordSigning.off());
        UUID id = UUID.randomUUID();
        ConsumerRecord<String, byte[]> record = record(id, "");
        ConsumerRecord<String, byte[]> binary = new ConsumerRecord<>("orders", 0, 0, "o-1", protobuf);
        record.headers().forEach(h -> binary.headers().add(h));
        binary.headers().add(WireFormat.CONTENT_TYPE, "application/x-protobuf".getBytes(StandardCharsets.UTF_8));

        dispatcher.dispatch(binary);
        dispatcher.dispatch(binary);

        assertThat(handled).singleElement().satisfies(event -> {
            assertThat(event.payload()).isEqualTo(protobuf);
            assertThat(event.contentType()).isEqualTo("application/x-protobuf");
        });
    }

    @Test
    void a_batch_handler_takes_a_polls_new_events_in_one_call_in_record_order_and_skips_those_handled_before() {
        List<List<UUID>> calls = new java.util.ArrayList<>();
        EventDispatcher dispatcher = new EventDispatcher(store, new DataSourceTransactionManager(db.dataSource()),
                List.of(HandlerRegistration.transactionalBatch("OrderPlaced", 1, "batched", events -> {
                    calls.add(events.stream().map(HandledEvent::eventId).toList());
                    jdbc.batchUpdate("INSERT INTO projection VALUES (?)",
                            events.stream().map(e -> new Object[] {e.eventId()}).toList());
                })), ClaimPolicy.ofDefaults(), RecordSigning.off());
        List<UUID> ids = java.util.stream.Stream.generate(UUID::randomUUID).limit(6).toList();

        dispatcher.dispatchBatch(ids.subList(0, 3).stream().map(id -> record(id, "{}")).toList());
        dispatcher.dispatchBatch(ids.subList(1, 6).stream().map(id -> record(id, "{}")).toList()); // 1 and 2 again

        assertThat(calls).containsExactly(ids.subList(0, 3), ids.subList(3, 6));
        assertThat(jdbc.queryForList("SELECT event_id FROM projection WHERE event_id IN (?, ?, ?, ?, ?, ?)", UUID.class,
                ids.toArray())).containsExactlyInAnyOrderElementsOf(ids);
    }

    @Test
    void a_failing_batch_rolls_back_whole_and_is_attempted_smaller_until_the_failing_event_fails_alone() {
        List<Integer> callSizes = new java.util.ArrayList<>();
        UUID bad = UUID.randomUUID();
        EventDispatcher dispatcher = new EventDispatcher(store, new DataSourceTransactionManager(db.dataSource()),
                List.of(HandlerRegistration.transactionalBatch("OrderPlaced", 1, "strict", events -> {
                    callSizes.add(events.size());
                    jdbc.batchUpdate("INSERT INTO projection VALUES (?)",
                            events.stream().map(e -> new Object[] {e.eventId()}).toList());
                    if (events.stream().anyMatch(e -> e.eventId().equals(bad))) {
                        throw new IllegalStateException("refused " + bad);
                    }
                })), ClaimPolicy.ofDefaults(), RecordSigning.off());
        UUID first = UUID.randomUUID();
        UUID second = UUID.randomUUID();
        UUID after = UUID.randomUUID();

        assertThatThrownBy(() -> dispatcher.dispatchBatch(List.of(record(first, "{}"), record(second, "{}"),
                record(bad, "{}"), record(after, "{}"))))
                .isInstanceOfSatisfying(org.springframework.kafka.listener.BatchListenerFailedException.class,
                        e -> assertThat(e.getIndex()).isEqualTo(2));

        assertThat(callSizes).as("the poll, then each record alone up to the one that fails").containsExactly(4, 1, 1, 1);
        assertThat(jdbc.queryForList("SELECT event_id FROM projection WHERE event_id IN (?, ?, ?, ?)", UUID.class,
                first, second, bad, after)).as("the failing call's writes rolled back with its claims")
                .containsExactlyInAnyOrder(first, second);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM once_handler_claim WHERE event_id IN (?, ?) "
                + "AND status = 2", Long.class, bad, after)).isZero(); // 2: succeeded
    }

    @Test
    void a_handler_marked_failed_after_its_last_retry_is_skipped_by_every_later_delivery() {
        AtomicInteger runs = new AtomicInteger();
        EventDispatcher dispatcher = new EventDispatcher(store, new DataSourceTransactionManager(db.dataSource()),
                List.of(HandlerRegistration.transactional("OrderPlaced", 1, "fragile", event -> {
                    runs.incrementAndGet();
                    throw new IllegalStateException("down");
                })), ClaimPolicy.ofDefaults(), RecordSigning.off());
        UUID id = UUID.randomUUID();
        HandlerFailedException failure = org.assertj.core.api.Assertions.catchThrowableOfType(HandlerFailedException.class,
                () -> dispatcher.dispatch(record(id, "{}")));

        dispatcher.markFailed(record(id, "{}"), failure);
        dispatcher.dispatch(record(id, "{}"));

        assertThat(runs).hasValue(1);
        assertThat(jdbc.queryForObject("SELECT status FROM once_handler_claim WHERE event_id = ?", Integer.class,
                id)).as("3: failed").isEqualTo(3);
    }

    @Test
    void a_record_that_claims_to_be_json_and_is_not_is_poison() {
        EventDispatcher dispatcher = new EventDispatcher(store, new DataSourceTransactionManager(db.dataSource()),
                List.of(HandlerRegistration.transactional("OrderPlaced", 1, "json", event -> { })), ClaimPolicy.ofDefaults(), RecordSigning.off());

        assertThatThrownBy(() -> dispatcher.dispatch(record(UUID.randomUUID(), "{not json")))
                .isInstanceOf(PoisonEventException.class).hasMessageContaining("not JSON");
    }

    @Test
    void a_leased_handler_that_dies_after_its_external_call_runs_again_after_the_lease_with_the_same_derived_key() {
        AtomicInteger calls = new AtomicInteger();
        EventHandler mailer = event -> {
            jdbc.update("INSERT INTO outbound VALUES (?)", event.derivedKey()); // the external call
            if (calls.incrementAndGet() == 1) {
                throw new SimulatedCrash();
            }
        };
        EventDispatcher dispatcher = new EventDispatcher(store, new DataSourceTransactionManager(db.dataSource()),
                List.of(HandlerRegistration.leased("OrderPlaced", 1, "mailer", mailer)),
                ClaimPolicy.custom().lease(Duration.ofSeconds(1)).build(), RecordSigning.off());
        UUID id = UUID.randomUUID();

        assertThatThrownBy(() -> dispatcher.dispatch(record(id, "{}"))).isInstanceOf(SimulatedCrash.class);
        long start = System.nanoTime();
        dispatcher.dispatch(record(id, "{}")); // the redelivery waits for the lease, then runs the handler again
        dispatcher.dispatch(record(id, "{}")); // a later redelivery is skipped

        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(500));
        assertThat(jdbc.queryForList("SELECT derived_key FROM outbound", String.class))
                .containsExactly(id + ":mailer", id + ":mailer");
        assertThat(calls).hasValue(2);
        assertThat(jdbc.queryForMap("SELECT CAST(status AS integer) AS status, fencing FROM once_handler_claim WHERE event_id = ?", id))
                .as("2: succeeded").containsEntry("status", 2).containsEntry("fencing", 2);
    }

    @Test
    void a_transactional_handler_that_dies_before_commit_leaves_nothing_and_the_redelivery_runs_it_from_scratch() {
        AtomicInteger calls = new AtomicInteger();
        EventHandler projection = event -> {
            jdbc.update("INSERT INTO projection VALUES (?)", event.eventId());
            if (calls.incrementAndGet() == 1) {
                throw new SimulatedCrash();
            }
        };
        EventDispatcher dispatcher = new EventDispatcher(store, new DataSourceTransactionManager(db.dataSource()),
                List.of(HandlerRegistration.transactional("OrderPlaced", 1, "projection", projection)), ClaimPolicy.ofDefaults(), RecordSigning.off());
        UUID id = UUID.randomUUID();

        assertThatThrownBy(() -> dispatcher.dispatch(record(id, "{}"))).isInstanceOf(SimulatedCrash.class);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM once_handler_claim WHERE event_id = ?", Long.class, id))
                .as("the claim rolled back with the write").isZero();
        dispatcher.dispatch(record(id, "{}"));
        dispatcher.dispatch(record(id, "{}"));

        assertThat(jdbc.queryForObject("SELECT count(*) FROM projection WHERE event_id = ?", Long.class, id)).isEqualTo(1);
    }

    @Test
    void a_batch_is_claimed_in_one_go_and_a_failure_inside_it_commits_the_records_before_and_names_its_index() {
        List<UUID> ids = java.util.stream.Stream.generate(UUID::randomUUID).limit(5).toList();
        EventDispatcher dispatcher = new EventDispatcher(store, new DataSourceTransactionManager(db.dataSource()),
                List.of(HandlerRegistration.transactional("OrderPlaced", 1, "projection", event -> {
                    if (event.eventId().equals(ids.get(2))) {
                        throw new IllegalStateException("record 2 cannot be projected");
                    }
                    jdbc.update("INSERT INTO projection VALUES (?)", event.eventId());
                })), ClaimPolicy.ofDefaults(), RecordSigning.off());
        List<ConsumerRecord<String, byte[]>> poll = new java.util.ArrayList<>(ids.stream().map(id -> record(id, "{}")).toList());
        poll.add(1, record(ids.get(0), "{}")); // a duplicate inside the same poll

        assertThatThrownBy(() -> dispatcher.dispatchBatch(poll))
                .isInstanceOfSatisfying(org.springframework.kafka.listener.BatchListenerFailedException.class,
                        e -> assertThat(e.getIndex()).isEqualTo(3));

        assertThat(jdbc.queryForList("SELECT event_id FROM projection WHERE event_id = ANY(?)", UUID.class,
                (Object) ids.toArray(UUID[]::new))).containsExactlyInAnyOrder(ids.get(0), ids.get(1));
        dispatcher.dispatchBatch(poll.subList(4, poll.size())); // the redelivery after the failing record
        assertThat(jdbc.queryForObject("SELECT count(*) FROM projection WHERE event_id = ANY(?)", Long.class,
                (Object) ids.toArray(UUID[]::new))).isEqualTo(4);
    }

    @Test
    void the_same_event_id_with_another_payload_is_poison() {
        EventDispatcher dispatcher = new EventDispatcher(store, new DataSourceTransactionManager(db.dataSource()),
                List.of(HandlerRegistration.transactional("OrderPlaced", 1, "noop", event -> { })), ClaimPolicy.ofDefaults(), RecordSigning.off());
        UUID id = UUID.randomUUID();
        dispatcher.dispatch(record(id, "{\"amount\":1}"));

        assertThatThrownBy(() -> dispatcher.dispatch(record(id, "{\"amount\":2}")))
                .isInstanceOf(PoisonEventException.class).hasMessageContaining("IDEMPOTENCY_KEY_CONFLICT");
        dispatcher.dispatch(record(id, "{ \"amount\" : 1.0 }")); // the same payload, spelled differently: a redelivery
    }
}
