package dev.once.relay.autoconfigure;

import dev.once.relay.CdcSettings;
import dev.once.relay.RelayOptions;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** {@code once.outbox.relay.*}: which relay runs and how. Defaults are the library's constants. */
@ConfigurationProperties("once.outbox.relay")
public class OnceRelayProperties {

    /** The relays. */
    public enum Mode { CDC, POLLING }

    /** Whether a relay runs in this application. */
    private boolean enabled = true;

    /** CDC (Debezium, the default) or POLLING (for databases without logical replication). */
    private Mode mode = Mode.CDC;

    /** Kafka bootstrap servers; empty means spring.kafka.bootstrap-servers. */
    private String bootstrapServers = "";

    /** Topics are named {@code <topic-prefix>.<aggregate_type>}. */
    private String topicPrefix = "once";

    /** Rows per batch. */
    private int batchSize = RelayOptions.BATCH_SIZE;

    /** Batches the polling relay works on at once, each on aggregates of its own. */
    private int workers = RelayOptions.WORKERS;

    /** How long published rows are kept; 0 deletes them once published. */
    private Duration retention = RelayOptions.RETENTION;

    /** How long one batch waits for Kafka's acknowledgements. */
    private Duration ackTimeout = Duration.ofSeconds(10);

    /** The schema of the outbox table (CDC); empty means the connection's current schema. */
    private String schema = "";

    /** Replication slot and publication (CDC). */
    private String slotName = "once_outbox";

    private String publicationName = "once_outbox";

    /** How often the CDC relay writes its heartbeat. */
    private Duration heartbeat = CdcSettings.HEARTBEAT;

    /** How often a standby tries to become leader (CDC). */
    private Duration leaderPoll = CdcSettings.LEADER_POLL;

    /** Extra Kafka producer properties. */
    private Map<String, String> producer = new LinkedHashMap<>();

    public RelayOptions toOptions() {
        return RelayOptions.ofDefaults().withBatchSize(batchSize).withRetention(retention).withWorkers(workers);
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Mode getMode() {
        return mode;
    }

    public void setMode(Mode mode) {
        this.mode = mode;
    }

    public String getBootstrapServers() {
        return bootstrapServers;
    }

    public void setBootstrapServers(String bootstrapServers) {
        this.bootstrapServers = bootstrapServers;
    }

    public String getTopicPrefix() {
        return topicPrefix;
    }

    public void setTopicPrefix(String topicPrefix) {
        this.topicPrefix = topicPrefix;
    }

    public int getBatchSize() {
        return batchSize;
    }

    public void setBatchSize(int batchSize) {
        this.batchSize = batchSize;
    }

    public int getWorkers() {
        return workers;
    }

    public void setWorkers(int workers) {
        this.workers = workers;
    }

    public Duration getRetention() {
        return retention;
    }

    public void setRetention(Duration retention) {
        this.retention = retention;
    }

    public Duration getAckTimeout() {
        return ackTimeout;
    }

    public void setAckTimeout(Duration ackTimeout) {
        this.ackTimeout = ackTimeout;
    }

    public String getSchema() {
        return schema;
    }

    public void setSchema(String schema) {
        this.schema = schema;
    }

    public String getSlotName() {
        return slotName;
    }

    public void setSlotName(String slotName) {
        this.slotName = slotName;
    }

    public String getPublicationName() {
        return publicationName;
    }

    public void setPublicationName(String publicationName) {
        this.publicationName = publicationName;
    }

    public Duration getHeartbeat() {
        return heartbeat;
    }

    public void setHeartbeat(Duration heartbeat) {
        this.heartbeat = heartbeat;
    }

    public Duration getLeaderPoll() {
        return leaderPoll;
    }

    public void setLeaderPoll(Duration leaderPoll) {
        this.leaderPoll = leaderPoll;
    }

    public Map<String, String> getProducer() {
        return producer;
    }

    public void setProducer(Map<String, String> producer) {
        this.producer = producer;
    }
}
