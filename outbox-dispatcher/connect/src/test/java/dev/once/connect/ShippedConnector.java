package dev.once.connect;

import dev.once.test.PostgresServer;
import dev.once.test.TestSigning;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The connector configuration shipped in this module ({@value #RESOURCE}, in the jar and the plugin zip), as an
 * operator would adapt it: the database's coordinates and credentials, the service's schema, slot and publication,
 * the topic prefix and the key ring (the tests' {@link TestSigning} key). Everything else is as shipped.
 */
public final class ShippedConnector {

    public static final String RESOURCE = "/dev/once/connect/once-outbox-connector.json";
    private static final String SHIPPED_SLOT = "once_connect_orders";

    private ShippedConnector() {
    }

    /** The SQL an operator runs once: the publication the connector reads, limited to Once's two tables. */
    public static String publication(String schema, String slot) {
        return "CREATE PUBLICATION " + slot + " FOR TABLE " + schema + ".outbox_event, " + schema + ".once_relay_heartbeat";
    }

    public static Map<String, String> config(PostgresServer server, String schema, String slot, String prefix) {
        JsonNode shipped;
        try (InputStream in = ShippedConnector.class.getResourceAsStream(RESOURCE)) {
            shipped = JsonMapper.builder().build().readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, String> config = new LinkedHashMap<>();
        shipped.path("config").properties().forEach(e -> config.put(e.getKey().replace("public.", schema + "."),
                e.getValue().asString().replace("public.", schema + ".").replace(SHIPPED_SLOT, slot)));
        URI url = URI.create(server.jdbcUrl().substring("jdbc:".length()));
        config.put("database.hostname", url.getHost());
        config.put("database.port", Integer.toString(url.getPort()));
        config.put("database.dbname", url.getPath().substring(1));
        config.put("database.user", server.username());
        config.put("database.password", server.password());
        config.put("topic.prefix", "cdc-" + prefix);
        config.put("transforms.once.topic.prefix", prefix);
        config.put("transforms.once.signing.current-key", TestSigning.KEY_ID);
        config.remove("transforms.once.signing.key.k1");
        config.put("transforms.once.signing.key." + TestSigning.KEY_ID, TestSigning.SECRET);
        return config;
    }
}
