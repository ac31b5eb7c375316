package dev.once.relay.autoconfigure;

import dev.once.relay.KafkaTransport;
import dev.once.relay.RelayOptions;
import dev.once.wire.WireFormat;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code once.outbox.relay.*}: which relay runs and how. Kafka connection settings are Spring Boot's own
 * ({@code spring.kafka.*}); defaults are the library's constants. The CDC relay's own settings are
 * {@code once.outbox.relay.cdc.*} (module {@code once-outbox-relay-cdc}).
 */
@ConfigurationProperties("once.outbox.relay")
public class OnceRelayProperties {

    /**
     * The relays: {@code CDC} (Debezium embedded), {@code POLLING}, or {@code EXTERNAL}: a relay outside the
     * application (Kafka Connect with once-connect) publishes the outbox; none runs here, and rows leave once the
     * connector's slot (once.outbox.relay.external.slot-name) confirmed them.
     */
    public enum Mode { CDC, POLLING, EXTERNAL }

    /** Whether a relay runs in this application. */
    private boolean enabled = true;

    /**
     * CDC (Debezium, module once-outbox-relay-cdc), POLLING (for databases without logical replication) or EXTERNAL
     * (Kafka Connect with once-connect publishes; no relay runs here). Unset: CDC when once-outbox-relay-cdc is on the
     * classpath, POLLING otherwise.
     */
    private Mode mode;

    /** Topics are named {@code <topic-prefix>.<aggregate_type>}, unless topic or topic-template is set. */
    private String topicPrefix = WireFormat.DEFAULT_TOPIC_PREFIX;

    /** One topic for every event, instead of a topic per aggregate type. */
    private String topic = "";

    /**
     * Topics named by a template over {aggregate_type}, {event_type} and {event_version}, e.g.
     * orders.{aggregate_type}.{event_type}, instead of a topic per aggregate type.
     */
    private String topicTemplate = "";

    /** Rows read and published per batch. */
    private int batchSize = RelayOptions.BATCH_SIZE;

    /** Batches the polling relay works on at once, each on aggregates of its own. */
    private int workers = RelayOptions.WORKERS;

    /**
     * How long published rows are kept, then deleted by the retention sweep (once.retention.*); 0 deletes them once
     * published (with CDC or EXTERNAL: once the replication slot confirmed them).
     */
    private Duration retention = RelayOptions.RETENTION;

    /** How long one batch waits for Kafka's acknowledgements before it is retried. */
    private Duration ackTimeout = KafkaTransport.ACK_TIMEOUT;

    /** The relay is unhealthy (DOWN) while the oldest pending event is older than this. */
    private Duration maxPendingAge = RelayOptions.MAX_PENDING_AGE;

    /**
     * Producer properties of the relay only, over Spring Boot's {@code spring.kafka.producer.*}; acks=all and
     * enable.idempotence=true are always set.
     */
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

    public String getTopicPrefix() {
        return topicPrefix;
    }

    public void setTopicPrefix(String topicPrefix) {
        this.topicPrefix = topicPrefix;
    }

    public String getTopic() {
        return topic;
    }

    public void setTopic(String topic) {
        this.topic = topic;
    }

    public String getTopicTemplate() {
        return topicTemplate;
    }

    public void setTopicTemplate(String topicTemplate) {
        this.topicTemplate = topicTemplate;
    }

    /** The router these properties describe: a fixed topic, a template, or the prefix and the aggregate type. */
    public dev.once.relay.TopicRouter toTopicRouter() {
        try {
            return dev.once.relay.TopicRouter.configured(topic, topicTemplate, topicPrefix);
        } catch (IllegalArgumentException e) {
            throw new dev.once.OnceConfigurationException("once.outbox.relay.topic / topic-template: " + e.getMessage(),
                    "Set either once.outbox.relay.topic (one topic) or once.outbox.relay.topic-template (over "
                            + "{aggregate_type}, {event_type} and {event_version}), not both");
        }
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

    public Duration getMaxPendingAge() {
        return maxPendingAge;
    }

    public void setMaxPendingAge(Duration maxPendingAge) {
        this.maxPendingAge = maxPendingAge;
    }

    public Map<String, String> getProducer() {
        return producer;
    }

    public void setProducer(Map<String, String> producer) {
        this.producer = producer;
    }
}
