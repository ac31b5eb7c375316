package dev.once.example;

import java.nio.file.Path;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The reference service's own settings ({@code once.reference.*}); Once's are under {@code once.idempotency},
 * {@code once.outbox.relay} and {@code once.dispatcher}.
 *
 * @param dataDir where uploaded files (and, on the embedded default, PostgreSQL's data) are kept
 * @param topicPartitions partitions of the event topics the service creates at startup
 * @param topicReplicas their replication factor
 */
@ConfigurationProperties("once.reference")
public record ReferenceProperties(Path dataDir, int topicPartitions, short topicReplicas) {

    static final String DATA_DIR = "once-data";
    static final int TOPIC_PARTITIONS = 6;
    static final short TOPIC_REPLICAS = 1;

    public ReferenceProperties {
        dataDir = dataDir == null ? Path.of(DATA_DIR) : dataDir;
        topicPartitions = topicPartitions <= 0 ? TOPIC_PARTITIONS : topicPartitions;
        topicReplicas = topicReplicas <= 0 ? TOPIC_REPLICAS : topicReplicas;
    }
}
