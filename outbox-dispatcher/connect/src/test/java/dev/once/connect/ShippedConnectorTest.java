package dev.once.connect;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.relay.RelayOptions;
import dev.once.relay.cdc.CdcSettings;
import dev.once.relay.cdc.internal.EngineProperties;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The connector configuration shipped for Kafka Connect reads the outbox as the embedded CDC relay does. */
class ShippedConnectorTest {

    /** Where a Connect worker and the embedded relay differ by design: the database's coordinates and the prefix. */
    static final Set<String> DEPLOYMENT = Set.of("database.hostname", "database.port", "database.dbname", "database.user",
            "database.password", "topic.prefix");

    @Test
    void every_setting_it_shares_with_the_embedded_relay_has_the_relays_value_heartbeat_statement_included()
            throws IOException {
        JsonNode shipped;
        try (InputStream in = ShippedConnector.class.getResourceAsStream(ShippedConnector.RESOURCE)) {
            shipped = JsonMapper.builder().build().readTree(in).path("config");
        }
        Properties embedded = EngineProperties.of(CdcSettings.of("jdbc:postgresql://postgres.example.internal:5432/orders",
                "once_connect", null, "public").withSlot(shipped.path("slot.name").asString(),
                shipped.path("publication.name").asString()), RelayOptions.ofDefaults());

        Map<String, String> differing = new TreeMap<>();
        shipped.properties().forEach(e -> {
            String relays = embedded.getProperty(e.getKey());
            if (relays != null && !DEPLOYMENT.contains(e.getKey()) && !relays.equals(e.getValue().asString())) {
                differing.put(e.getKey(), e.getValue().asString() + " (the relay: " + relays + ")");
            }
        });
        assertThat(differing).isEmpty();
        assertThat(shipped.path("heartbeat.action.query").asString())
                .isEqualTo(embedded.getProperty("heartbeat.action.query"));
    }
}
