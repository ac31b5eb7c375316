package dev.once.relay;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.test.TestKafka;
import dev.once.wire.RecordSigning;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;

/** The relay contract for the polling relay, plus what only it does: several instances side by side. */
class PollingRelayIT extends EmbeddedRelayContractIT {

    @Override
    protected OutboxRelay newRelay(String name, EventTransport transport, RelayOptions options) {
        return new PollingRelay(name, db.dataSource(), transport, options, RelayListener.NONE);
    }

    @Test
    void a_parked_aggregate_with_a_long_queue_behind_it_does_not_crowd_out_the_others() {
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version,
                                          payload, parked_at, park_reason)
                VALUES (gen_random_uuid(), 'acme', 'alice', 'order', 'o-stuck', 'OrderPlaced', 1, '{"n": 0}', now(), 'test')
                """);
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version, payload)
                SELECT gen_random_uuid(), 'acme', 'alice', 'order', 'o-stuck', 'OrderPlaced', 1, convert_to(jsonb_build_object('n', n)::text, 'UTF8')
                FROM generate_series(1, 300) AS n ORDER BY n
                """);
        commitEvents(1, 100);
        started("a", Map.of(), RelayOptions.ofDefaults().withBatchSize(50));

        Received received = consumeUntil(prefix + ".order", 100);

        assertThat(received.records()).noneMatch(r -> "o-stuck".equals(r.key()));
        assertThat(received.distinctEvents()).isEqualTo(100);
    }

    @Test
    void two_polling_relays_side_by_side_publish_everything_once_and_in_order() {
        commitEvents(1, 10_000);
        started("left", Map.of(), RelayOptions.ofDefaults().withBatchSize(50));
        started("right", Map.of(), RelayOptions.ofDefaults().withBatchSize(50));

        Received received = consumeUntil(prefix + ".order", 10_000);

        assertThat(received.distinctEvents()).isEqualTo(10_000);
        assertThat(received.duplicates()).isZero();
        assertThat(received.outOfOrder()).isZero();
    }

    @Test
    void while_another_relay_holds_the_oldest_aggregates_the_next_batch_takes_the_aggregates_after_them() throws Exception {
        commitEvents(1, 200);
        PollingRelay relay = new PollingRelay("next", db.dataSource(), new KafkaTransport(
                Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers()),
                TopicRouter.byAggregateType(prefix), Duration.ofSeconds(10), RecordSigning.off()), RelayOptions.ofDefaults().withBatchSize(20),
                RelayListener.NONE);
        try (relay; Connection other = db.dataSource().getConnection()) {
            other.setAutoCommit(false);
            try (Statement s = other.createStatement()) { // another relay mid-batch: it holds o-1 .. o-10
                s.execute("SELECT pg_advisory_xact_lock(" + PollingRelay.AGGREGATE_LOCK_SPACE
                        + ", hashtext('order/o-' || n)) FROM generate_series(1, 10) AS n");
            }

            assertThat(relay.relayOnce()).isEqualTo(20);
            assertThat(publishedNumbers()).containsExactlyElementsOf(range(11, 30));

            other.rollback();
            relay.relayOnce();
            assertThat(publishedNumbers()).as("the held rows first, then the next twenty after the taken ones")
                    .containsExactlyElementsOf(range(1, 40));
        }
        while (pending() > 0) {
            relay.relayOnce();
        }
        Received received = consumeUntil(prefix + ".order", 200);
        assertThat(received.distinctEvents()).isEqualTo(200);
        assertThat(received.outOfOrder()).isZero();
    }

    /** The {@code n} of the events no longer in the table (the relay deletes what Kafka acknowledged), ascending. */
    private List<Integer> publishedNumbers() {
        Set<Integer> left = new HashSet<>(jdbc.queryForList("SELECT (convert_from(payload, 'UTF8')::jsonb->>'n')::int FROM outbox_event", Integer.class));
        return range(1, 200).stream().filter(n -> !left.contains(n)).toList();
    }

    private static List<Integer> range(int from, int to) {
        return IntStream.rangeClosed(from, to).boxed().toList();
    }
}
