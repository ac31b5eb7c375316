package dev.once.relay;

import dev.once.wire.OutboxCodec;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ObjIntConsumer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The largest record batch each topic takes ({@code max.message.bytes}), so that a record only the broker would
 * refuse is refused before it is sent. The producer refuses a record larger than {@code max.request.size} before
 * sending it, and the relay then sends none of its aggregate's later events; a record the broker refuses was sent
 * with them, and the idempotent producer re-sequences and delivers those that follow it in the partition: the
 * aggregate's order would be lost. Checking each record against its topic's limit, as the producer checks its own,
 * keeps the later events behind it.
 *
 * <p>A producer whose {@code batch.size} exceeds a topic's limit would never deliver a full batch to it: the broker
 * refuses the batch, and the producer splits it into batches of {@code batch.size} again until they expire. So the
 * producer's batches are made no larger than the smallest limit met.
 *
 * <p>A limit is read once per topic, with the relay's own admin connection, and read again after a refusal (ours, in
 * case it was raised, or the broker's, in case it was lowered). A topic whose configuration the relay's principal may
 * not read ({@code DESCRIBE_CONFIGS}) is left to the producer's own check, and said so once. Thread-safe.
 */
final class TopicLimits {

    private static final Logger log = LoggerFactory.getLogger(KafkaTransport.class);

    /** A topic whose limit the relay may not read. */
    private static final int UNREADABLE = Integer.MAX_VALUE;

    private final KafkaProbe probe;
    private final ObjIntConsumer<String> batchSize;
    private final Map<String, Integer> limits = new ConcurrentHashMap<>();

    /**
     * @param batchSize told each topic learned and its limit, to keep the producer's batches within it
     */
    TopicLimits(KafkaProbe probe, ObjIntConsumer<String> batchSize) {
        this.probe = probe;
        this.batchSize = batchSize;
    }

    /**
     * Reads the limits of the {@code topics} not yet known. A topic that does not exist yet is asked again next
     * time.
     *
     * @throws TransportUnavailableException when Kafka does not answer
     */
    void learn(Collection<String> topics) {
        List<String> unknown = topics.stream().filter(t -> !limits.containsKey(t)).distinct().toList();
        if (unknown.isEmpty()) {
            return;
        }
        probe.maxMessageBytes(unknown).forEach((topic, limit) -> {
            limits.put(topic, limit.orElse(UNREADABLE));
            if (limit.isPresent()) {
                batchSize.accept(topic, limit.getAsInt());
            } else {
                log.warn("The relay may not read the configuration of topic {} (grant its principal DESCRIBE_CONFIGS "
                        + "on the outbox topics): a record Kafka's producer sends but the topic refuses as too large "
                        + "would let later events of its aggregate reach the topic before it", topic);
            }
        });
    }

    /**
     * Why {@code record}'s topic refuses it as too large, as Kafka would say, or {@code null}. A record over the
     * known limit has the limit read again first, in case it was raised, unless its topic is in {@code readAgain}:
     * one send reads a topic again at most once, however many of its records are too large.
     *
     * @param readAgain the topics this send has read again; the one read now is added
     */
    String refusal(ProducerRecord<String, byte[]> record, Set<String> readAgain) {
        Integer limit = limits.get(record.topic());
        if (limit == null || limit == UNREADABLE) {
            return null;
        }
        int size = OutboxCodec.batchSizeUpperBound(record);
        if (size <= limit) {
            return null;
        }
        if (readAgain.add(record.topic())) {
            forget(List.of(record.topic()));
            learn(List.of(record.topic()));
            limit = limits.get(record.topic());
        }
        return limit == null || limit == UNREADABLE || size <= limit ? null
                : "RecordTooLargeException: the record is " + size + " bytes when serialized, which is larger than "
                + limit + ", the max.message.bytes of topic " + record.topic();
    }

    /** Reads the limits of {@code topics} again before their next record: the broker refused one as too large. */
    void forget(Collection<String> topics) {
        topics.forEach(limits::remove);
    }
}
