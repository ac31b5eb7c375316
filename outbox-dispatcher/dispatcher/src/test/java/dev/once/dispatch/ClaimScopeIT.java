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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.kafka.listener.BatchListenerFailedException;

/**
 * A handler's claim is one row per handler and event ({@code once_handler_claim}, keyed by route and event id): it is
 * scoped by event type, event version, handler key and event id, and changing any one of them is an independent claim
 * (the handler runs again), keeping all four is a redelivery (it is skipped). Tenant and actor are part of the claim's
 * fingerprint: the same event id under another tenant or actor is a conflict, refused as poison, never skipped as the
 * first one's redelivery. And the dispatcher's listener hears every outcome once, however often an attempt was rolled
 * back.
 */
class ClaimScopeIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    static HandlerClaimStore store;

    final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    final Counting listener = new Counting();
    EventDispatcher dispatcher;

    @BeforeAll
    static void migrate() {
        OnceMigrations.migrate(db.dataSource());
        store = HandlerClaimStore.create(db.dataSource());
    }

    @BeforeEach
    void setUp() {
        List<HandlerRegistration> handlers = new ArrayList<>();
        for (String type : List.of("OrderPlaced", "OrderShipped")) {
            for (int version : List.of(1, 2)) {
                for (String key : List.of("projection", "audit")) {
                    handlers.add(HandlerRegistration.transactional(type, version, key, event ->
                            runs.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet()));
                }
            }
        }
        handlers.add(HandlerRegistration.transactional("OrderFailed", 1, "projection", event -> {
            throw new IllegalStateException("the projection is broken for this event");
        }));
        dispatcher = new EventDispatcher(store, new DataSourceTransactionManager(db.dataSource()), handlers,
                ClaimPolicy.custom().lease(Duration.ofSeconds(5)).build(), RecordSigning.off(), listener);
    }

    @Test
    void keeping_all_four_is_a_redelivery_and_changing_any_one_is_an_independent_claim() {
        Event base = new Event(UUID.randomUUID(), "acme", "alice", "OrderPlaced", 1);
        dispatcher.dispatch(base.record());
        assertThat(runs("projection")).isEqualTo(1);
        assertThat(runs("audit")).as("the handler key is part of the scope").isEqualTo(1);

        dispatcher.dispatch(base.record());
        assertThat(runs("projection")).as("all four kept: skipped").isEqualTo(1);

        List<Event> changedOnce = List.of(base.withType("OrderShipped"), base.withVersion(2), base.withId(UUID.randomUUID()));
        for (Event changed : changedOnce) {
            int before = runs("projection");
            dispatcher.dispatch(changed.record());
            assertThat(runs("projection")).as("changed: %s", changed).isEqualTo(before + 1);
            dispatcher.dispatch(changed.record());
            assertThat(runs("projection")).as("and its own redelivery is skipped: %s", changed).isEqualTo(before + 1);
        }
    }

    @Test
    void the_same_event_under_another_tenant_or_actor_is_refused_as_poison_never_skipped_as_the_first() {
        Event base = new Event(UUID.randomUUID(), "acme", "alice", "OrderPlaced", 1);
        dispatcher.dispatch(base.record());
        assertThat(runs("projection")).isEqualTo(1);

        for (Event other : List.of(base.withTenant("globex"), base.withActor("bob"), base.withTenant("globex").withActor("bob"))) {
            assertThatThrownBy(() -> dispatcher.dispatch(other.record())).as("%s", other)
                    .isInstanceOf(PoisonEventException.class).hasMessageContaining("tenant or actor");
        }

        assertThat(runs("projection")).as("not run for another tenant or actor").isEqualTo(1);
        assertThat(runs("audit")).isEqualTo(1);
        assertThat(new JdbcTemplate(db.dataSource()).queryForList(
                "SELECT DISTINCT tenant_id || '/' || actor_id FROM once_handler_claim WHERE event_id = ?", String.class,
                base.id())).containsExactly("acme/alice");
    }

    @Test
    void a_poll_whose_last_record_fails_counts_each_outcome_once_although_its_attempt_was_rolled_back() {
        List<ConsumerRecord<String, byte[]>> poll = List.of(
                new Event(UUID.randomUUID(), "acme", "alice", "OrderPlaced", 1).record(),
                new Event(UUID.randomUUID(), "acme", "alice", "OrderPlaced", 1).record(),
                new Event(UUID.randomUUID(), "acme", "alice", "OrderFailed", 1).record());

        assertThatThrownBy(() -> dispatcher.dispatchBatch(poll)).isInstanceOfSatisfying(BatchListenerFailedException.class,
                e -> assertThat(e.getIndex()).isEqualTo(2));

        assertThat(runs("projection")).as("run with the whole poll, then again with the first two alone").isEqualTo(4);
        assertThat(listener.handled).as("but committed, and counted, once each").containsEntry("projection", 2)
                .containsEntry("audit", 2);
        assertThat(listener.failed).containsExactlyEntriesOf(Map.of("projection", 1));
    }

    private int runs(String handler) {
        AtomicInteger n = runs.get(handler);
        return n == null ? 0 : n.get();
    }

    record Event(UUID id, String tenant, String actor, String type, int version) {

        Event withTenant(String t) {
            return new Event(id, t, actor, type, version);
        }

        Event withActor(String a) {
            return new Event(id, tenant, a, type, version);
        }

        Event withType(String t) {
            return new Event(id, tenant, actor, t, version);
        }

        Event withVersion(int v) {
            return new Event(id, tenant, actor, type, v);
        }

        Event withId(UUID other) {
            return new Event(other, tenant, actor, type, version);
        }

        ConsumerRecord<String, byte[]> record() {
            ConsumerRecord<String, byte[]> record = new ConsumerRecord<>("orders", 0, 0, "o-1",
                    "{\"n\":1}".getBytes(StandardCharsets.UTF_8));
            for (String[] h : new String[][] {{WireFormat.EVENT_ID, id.toString()}, {WireFormat.TENANT_ID, tenant},
                    {WireFormat.ACTOR_ID, actor}, {WireFormat.EVENT_TYPE, type},
                    {WireFormat.EVENT_VERSION, Integer.toString(version)}}) {
                record.headers().add(h[0], h[1].getBytes(StandardCharsets.UTF_8));
            }
            return record;
        }
    }

    static final class Counting implements DispatchListener {
        final Map<String, Integer> handled = new ConcurrentHashMap<>();
        final Map<String, Integer> failed = new ConcurrentHashMap<>();

        @Override
        public void handled(String handlerKey, Duration elapsed) {
            handled.merge(handlerKey, 1, Integer::sum);
        }

        @Override
        public void failed(String handlerKey) {
            failed.merge(handlerKey, 1, Integer::sum);
        }
    }
}
