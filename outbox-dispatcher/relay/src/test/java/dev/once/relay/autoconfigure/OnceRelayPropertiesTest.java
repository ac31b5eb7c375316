package dev.once.relay.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.relay.KafkaTransport;
import dev.once.relay.RelayOptions;
import dev.once.wire.WireFormat;
import org.junit.jupiter.api.Test;

class OnceRelayPropertiesTest {

    @Test
    void property_defaults_are_the_library_constants() {
        OnceRelayProperties properties = new OnceRelayProperties();

        assertThat(properties.toOptions()).isEqualTo(RelayOptions.ofDefaults());
        assertThat(properties.getTopicPrefix()).isEqualTo(WireFormat.DEFAULT_TOPIC_PREFIX);
        assertThat(properties.getAckTimeout()).isEqualTo(KafkaTransport.ACK_TIMEOUT);
        assertThat(properties.getMaxPendingAge()).isEqualTo(RelayOptions.MAX_PENDING_AGE);
        assertThat(properties.getMode()).as("chosen by the modules on the classpath unless set").isNull();
    }
}
