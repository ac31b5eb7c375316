package dev.once.reliability;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads topics from the beginning to their current end and counts records and distinct event ids: the difference is
 * what the relays delivered more than once (at-least-once), which the handlers' claims must absorb.
 */
final class TopicCensus {

    record Count(long records, long distinctEvents) {
        long duplicates() {
            return records - distinctEvents;
        }
    }

    private TopicCensus() {
    }

    static Count of(String bootstrapServers, List<String> topics) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "census-" + UUID.randomUUID());
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        long records = 0;
        Set<String> events = new HashSet<>();
        try (KafkaConsumer<byte[], byte[]> consumer =
                     new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = topics.stream().flatMap(t -> consumer.partitionsFor(t).stream()
                    .map(p -> new TopicPartition(t, p.partition()))).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (partitions.stream().anyMatch(p -> consumer.position(p) < end.get(p)) && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    records++;
                    Header id = record.headers().lastHeader("event_id");
                    events.add(id == null ? "none-" + records : new String(id.value(), StandardCharsets.UTF_8));
                }
            }
        }
        return new Count(records, events.size());
    }
}
