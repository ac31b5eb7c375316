package dev.once.connect;

import static org.awaitility.Awaitility.await;

import dev.once.spi.SlotWatermarks;
import dev.once.relay.OutboxRelay;
import dev.once.test.PostgresServer;
import dev.once.test.ReplicationCleanup;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.sql.DataSource;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Kafka Connect as a relay, the way a service runs beside it with {@code once.outbox.relay.mode=external}: the shipped
 * connector configuration on a real Connect cluster, and in the service the watermarks of the connector's slot, which
 * decide when a row leaves the outbox. Starting it creates the publication (as an operator would, once) and the
 * connector; closing it deletes the connector, whose offsets Connect keeps, so that one of the same name resumes.
 */
final class ConnectorRelay implements OutboxRelay {

    private final EmbeddedConnectCluster cluster;
    private final DataSource dataSource;
    private final String name;
    private final String slot;
    private final Map<String, String> config;
    private final SlotWatermarks watermarks;
    private volatile RelayState state = new RelayState(RelayState.Status.STOPPED, "not started");

    /**
     * @param name the connector's name, and so its offsets: cluster-wide, one per service
     * @param overrides settings over the shipped ones, such as the connector's role or a shorter heartbeat
     */
    ConnectorRelay(EmbeddedConnectCluster cluster, DataSource dataSource, PostgresServer server, String schema,
                   String name, String slot, String topicPrefix, SlotWatermarks.Options options,
                   Map<String, String> overrides) {
        this.cluster = cluster;
        this.dataSource = dataSource;
        this.name = name;
        this.slot = slot;
        this.config = new LinkedHashMap<>(ShippedConnector.config(server, schema, slot, topicPrefix));
        if (overrides.containsKey("transforms.once.signing.current-key")) { // a key ring of the test's own
            this.config.keySet().removeIf(key -> key.startsWith("transforms.once.signing.key."));
        }
        this.config.putAll(overrides);
        this.watermarks = new SlotWatermarks(dataSource, slot, options);
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        if (jdbc.queryForObject("SELECT count(*) FROM pg_publication WHERE pubname = ?", Long.class, slot) == 0) {
            ShippedConnector.createPublication(jdbc, schema, slot);
        }
    }

    SlotWatermarks watermarks() {
        return watermarks;
    }

    @Override
    public void start() {
        ShippedConnector.createHeartbeatTopic(cluster, config);
        watermarks.start();
        cluster.configureConnector(name, config);
        try {
            cluster.assertions().assertConnectorAndAtLeastNumTasksAreRunning(name, 1, "the connector did not start");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        await("slot " + slot + " streamed").atMost(Duration.ofSeconds(60)).until(() -> slotActive(dataSource, slot));
        state = new RelayState(RelayState.Status.RUNNING, "connector " + name);
    }

    @Override
    public void close() {
        watermarks.close();
        if (cluster.connectors().contains(name)) {
            cluster.deleteConnector(name);
        }
        await("slot " + slot + " released").atMost(Duration.ofSeconds(60)).until(() -> !slotActive(dataSource, slot));
        state = new RelayState(RelayState.Status.STOPPED, "deleted");
    }

    /** Drops the connector's slot and publication; the connector must be deleted first. */
    void dropSlot() {
        ReplicationCleanup.drop(dataSource, slot, slot);
    }

    @Override
    public RelayState state() {
        return state;
    }

    static boolean slotActive(DataSource dataSource, String slot) {
        return Boolean.TRUE.equals(new JdbcTemplate(dataSource).queryForObject(
                "SELECT count(*) > 0 FROM pg_replication_slots WHERE slot_name = ? AND active", Boolean.class, slot));
    }
}
