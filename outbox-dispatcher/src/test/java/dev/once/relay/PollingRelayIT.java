package dev.once.relay;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The relay contract for the polling relay, plus what only it does: several instances side by side. */
class PollingRelayIT extends RelayContractIT {

    @Override
    OutboxRelay newRelay(String name, EventTransport transport, RelayOptions options) {
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
                SELECT gen_random_uuid(), 'acme', 'alice', 'order', 'o-stuck', 'OrderPlaced', 1, jsonb_build_object('n', n)
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
}
