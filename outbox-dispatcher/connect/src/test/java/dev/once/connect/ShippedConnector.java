package dev.once.connect;

import dev.once.test.PostgresServer;
import dev.once.test.TestSigning;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.springframework.jdbc.core.JdbcTemplate;
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

    /**
     * The SQL an operator runs once as the outbox's owner: the publication the connector reads, limited to the outbox
     * columns a message is made of (PostgreSQL 15 and later; before, publications have no column lists, and the
     * connector decodes every column, which the transform ignores), and to inserts.
     *
     * @param serverVersion PostgreSQL's {@code server_version_num}
     */
    public static String publication(String schema, String slot, int serverVersion) {
        String columns = serverVersion >= 150_000 ? " (" + MESSAGE_COLUMNS + ")" : "";
        return "CREATE PUBLICATION " + slot + " FOR TABLE " + schema + ".outbox_event" + columns
                + " WITH (publish = 'insert')";
    }

    /** Creates the publication as {@link #publication(String, String, int)} says, for the server behind jdbc. */
    public static void createPublication(JdbcTemplate jdbc, String schema, String slot) {
        jdbc.execute(publication(schema, slot,
                jdbc.queryForObject("SELECT current_setting('server_version_num')::int", Integer.class)));
    }

    /** The outbox columns a message is made of, as docs/SCALING.md lists them for the publication. */
    public static final String MESSAGE_COLUMNS = "id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, "
            + "event_version, payload, headers, content_type";

    /**
     * The topic Debezium's heartbeats go to ({@code __debezium-heartbeat.<topic.prefix>}), which an operator creates
     * with the outbox's topics: the connector creates no topic.
     */
    public static String heartbeatTopic(Map<String, String> config) {
        return "__debezium-heartbeat." + config.get("topic.prefix");
    }

    /** Creates {@link #heartbeatTopic} on {@code cluster}'s Kafka, unless it exists: compacted, one partition. */
    public static void createHeartbeatTopic(EmbeddedConnectCluster cluster, Map<String, String> config) {
        try {
            cluster.kafka().createTopic(heartbeatTopic(config), 1, 1, Map.of("cleanup.policy", "compact"));
        } catch (RuntimeException e) {
            if (!(e.getCause() instanceof ExecutionException failed && failed.getCause() instanceof TopicExistsException)) {
                throw e;
            }
        }
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
