package dev.once.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.audit.Operator;
import dev.once.idempotency.OnceMigrations;
import dev.once.idempotency.ParkedEvents;
import dev.once.test.TestDatabase;
import dev.once.wire.RecordSigning;
import dev.once.wire.WireFormat;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

/** The parking lot's statements on a real PostgreSQL: a key's rows in order, only its head due, a head at a time. */
class ParkingLotIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    static final Set<String> HANDLED = Set.of("OrderPlaced:v1");
    static final Delivery.Handlers HANDLERS = Delivery.Handlers.of(List.of(HandlerRegistration.transactional(
            "OrderPlaced", 1, "projection", event -> { })), UnhandledPolicy.ofDefaults());
    static final HandlerFailure FAILURE = HandlerFailure.of(new HandlerFailedException("projection",
            new IllegalStateException("down")));

    static JdbcTemplate jdbc;
    ParkingLot lot;

    @BeforeAll
    static void migrate() {
        OnceMigrations.migrate(db.dataSource());
        jdbc = new JdbcTemplate(db.dataSource());
    }

    @BeforeEach
    void setUp() {
        lot = new ParkingLot(db.dataSource(), "g-" + UUID.randomUUID(), new ParkingPolicy(Duration.ofMillis(1), 2.0,
                Duration.ofMillis(1), Duration.ofHours(1)));
    }

    @Test
    void a_failing_head_keeps_its_keys_later_records_behind_it_and_they_become_due_one_by_one_in_order() {
        lot.park(delivery(10, "k1"), FAILURE);
        lot.park(delivery(11, "k1"), null);
        lot.park(delivery(12, "k1"), null);
        lot.park(delivery(13, "k1"), null); // a redelivery parks nothing new
        lot.park(delivery(13, "k1"), null);

        assertThat(lot.parkedKeys(List.of(delivery(14, "k1"), delivery(15, "k2"))))
                .containsExactly(ParkingLot.key(delivery(14, "k1")));
        assertThat(rows()).containsExactly("10 failing", "11 behind", "12 behind", "13 behind");
        for (long offset = 10; offset <= 13; offset++) {
            ParkingLot.Parked head = awaitHead();
            assertThat(head.record().offset()).isEqualTo(offset);
            assertThat(lot.take(HANDLED, Duration.ofMinutes(1))).as("one head of a key at a time").isEmpty();
            lot.done(head);
        }
        assertThat(rows()).isEmpty();
    }

    @Test
    void a_held_head_is_taken_only_by_an_instance_with_a_handler_for_its_version() {
        lot.park(delivery(20, "k1"), null);

        assertThat(lot.take(Set.of("OrderPlaced:v2"), Duration.ofMinutes(1))).isEmpty();
        assertThat(lot.take(HANDLED, Duration.ofMinutes(1))).isPresent();
    }

    @Test
    void a_head_that_fails_past_its_window_is_failed_and_keeps_its_key() {
        ParkingLot noWindow = new ParkingLot(db.dataSource(), lot.group(), new ParkingPolicy(Duration.ofMillis(1), 2.0,
                Duration.ofMillis(1), Duration.ZERO));
        noWindow.park(delivery(30, "k1"), FAILURE);
        noWindow.park(delivery(31, "k1"), null);

        ParkingLot.Parked head = awaitHead();
        assertThat(noWindow.failed(head, FAILURE)).isTrue();
        assertThat(rows()).containsExactly("30 failing", "31 behind");
        assertThat(lot.take(HANDLED, Duration.ofMinutes(1))).isEmpty();
        assertThat(lot.parkedKeys(List.of(delivery(32, "k1")))).hasSize(1);
    }

    @Test
    void a_crash_between_a_heads_delete_and_its_successors_promotion_is_mended_at_the_next_start() {
        lot.park(delivery(40, "k1"), FAILURE);
        lot.park(delivery(41, "k1"), null);
        jdbc.update("DELETE FROM once_parked_event WHERE group_id = ? AND kafka_offset = 40", lot.group());

        assertThat(lot.take(HANDLED, Duration.ofMinutes(1))).as("waiting behind a row that is gone").isEmpty();
        assertThat(lot.promoteAll()).isEqualTo(1);
        assertThat(awaitHead().record().offset()).isEqualTo(41);
    }

    @Test
    void a_key_is_a_tenants_so_another_tenants_aggregate_with_the_same_id_never_waits_behind_it() {
        lot.park(delivery(60, "order-7", "acme"), FAILURE);
        lot.park(delivery(61, "order-7", "globex"), FAILURE); // its own head, not behind acme's
        lot.park(delivery(62, "order-7", "acme"), null);

        assertThat(lot.parkedKeys(List.of(delivery(63, "order-7", "initech")))).as("a third tenant flows").isEmpty();
        assertThat(lot.parkedKeys(List.of(delivery(63, "order-7", "globex")))).hasSize(1);
        assertThat(rows()).containsExactly("60 failing", "61 failing", "62 behind");
        ParkingLot.Parked first = awaitHead();
        ParkingLot.Parked second = awaitHead();
        assertThat(List.of(first.record().offset(), second.record().offset())).as("both tenants' heads at once")
                .containsExactlyInAnyOrder(60L, 61L);
        ParkingLot.Parked acme = first.record().offset() == 60 ? first : second;
        lot.done(acme);
        assertThat(awaitHead().record().offset()).as("acme's next event, once acme's head is done").isEqualTo(62);
    }

    @Test
    void operators_leave_a_head_that_is_running_to_its_run_so_the_events_behind_it_never_overtake_it() {
        lot.park(delivery(50, "k1"), FAILURE);
        lot.park(delivery(51, "k1"), null);
        ParkedEvents operators = ParkedEvents.create(db.dataSource());
        ParkedEvents.Filter key = ParkedEvents.Filter.all().group(lot.group());
        Operator ops = new Operator("ops", Operator.API, "cleaning up");

        ParkingLot.Parked running = awaitHead(); // a dispatcher's retrier runs it, under its lease
        assertThat(operators.retry(key, ops)).as("retry leaves it to its run").isZero();
        assertThat(operators.abandon(key, ops)).as("only the event behind it is abandoned").isEqualTo(1);
        assertThat(lot.take(HANDLED, Duration.ofMinutes(1))).isEmpty();
        assertThat(lot.failed(running, FAILURE)).isFalse();
        assertThat(rows()).containsExactly("50 failing", "51 behind");

        ParkingLot.Parked again = awaitHead(); // its next attempt; the lease lapses while the handler still runs
        jdbc.update("UPDATE once_parked_event SET locked_until = statement_timestamp() WHERE id = ?", again.id());
        assertThat(operators.abandon(key, ops)).isEqualTo(1);
        assertThat(lot.failed(again, FAILURE)).as("a late failure does not undo the abandon").isFalse();
        lot.held(again);
        assertThat(jdbc.queryForList("SELECT status FROM once_parked_event WHERE group_id = ?", String.class,
                lot.group())).containsOnly("abandoned");
    }

    ParkingLot.Parked awaitHead() {
        Optional<ParkingLot.Parked> head = Optional.empty();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (head.isEmpty() && System.nanoTime() < deadline) {
            head = lot.take(HANDLED, Duration.ofMinutes(1)); // due after the policy's 1 ms
        }
        return head.orElseThrow();
    }

    List<String> rows() {
        return jdbc.queryForList("SELECT kafka_offset || ' ' || reason FROM once_parked_event WHERE group_id = ? "
                + "ORDER BY kafka_offset", String.class, lot.group());
    }

    static Delivery delivery(long offset, String key) {
        return delivery(offset, key, "acme");
    }

    static Delivery delivery(long offset, String key, String tenant) {
        return Delivery.of(0, record(offset, key, tenant), HANDLERS, RecordSigning.off());
    }

    static ConsumerRecord<String, byte[]> record(long offset, String key, String tenant) {
        RecordHeaders headers = new RecordHeaders();
        Map.of(WireFormat.EVENT_ID, UUID.randomUUID().toString(), WireFormat.TENANT_ID, tenant, WireFormat.ACTOR_ID,
                "alice", WireFormat.EVENT_TYPE, "OrderPlaced", WireFormat.EVENT_VERSION, "1")
                .forEach((name, value) -> headers.add(name, value.getBytes(StandardCharsets.UTF_8)));
        return new ConsumerRecord<>("once.order", 0, offset, 0L, TimestampType.CREATE_TIME, -1, -1, key,
                "{}".getBytes(StandardCharsets.UTF_8), headers, Optional.empty());
    }
}
