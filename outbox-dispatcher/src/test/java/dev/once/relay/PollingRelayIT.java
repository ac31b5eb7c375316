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
