package dev.once.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code once.outbox.relay.external.*}: the relay outside the application ({@code once.outbox.relay.mode=external},
 * Kafka Connect with once-connect) is known to the service by its replication slot, which decides when a row has been
 * published and may leave the outbox ({@link OnceSlotProperties}).
 */
@ConfigurationProperties("once.outbox.relay.external")
public class OnceExternalRelayProperties {

    /**
     * The replication slot of the Debezium connector that relays this outbox (its {@code slot.name}). Required: rows
     * leave the outbox only once this slot has confirmed them, and none while it does not exist.
     */
    private String slotName = "";

    public String getSlotName() {
        return slotName;
    }

    public void setSlotName(String slotName) {
        this.slotName = slotName;
    }
}
