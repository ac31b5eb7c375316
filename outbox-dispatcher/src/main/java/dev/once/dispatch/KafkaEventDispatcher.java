package dev.once.dispatch;

import dev.once.TransientFailures;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.listener.BatchMessageListener;

/**
 * Consumes outbox topics with spring-kafka and hands every poll to the {@link EventDispatcher}, which claims a run of
 * TRANSACTIONAL records with one statement and handles it in one transaction. Offsets are
 * committed after every record of a poll was handled (its handlers' transactions have committed); a redelivery after
 * a crash is absorbed by the claims, so committing per poll rather than per record loses nothing. Failures use spring-kafka's
 * {@link DefaultErrorHandler}: a failing handler is retried with exponential backoff ({@link RetryPolicy}), then its
 * claim is marked
 * {@code failed} and the record goes to {@code <topic>.dlt} with headers {@code once-dlt-reason},
 * {@code once-dlt-handler} and {@code once-dlt-attempts}; a poison record goes there at once. Either way the
 * partition keeps flowing.
 */
public final class KafkaEventDispatcher implements AutoCloseable {

    public static final String DLT_SUFFIX = ".dlt";

    /** Between retries of a record whose failure was the database's: 0.5 s growing to 5 s, then round again. */
    private static final org.springframework.util.backoff.BackOff TRANSIENT_BACK_OFF = transientBackOff();
    public static final String DLT_REASON = "once-dlt-reason";
    public static final String DLT_HANDLER = "once-dlt-handler";
    public static final String DLT_ATTEMPTS = "once-dlt-attempts";

    private final ConcurrentMessageListenerContainer<String, byte[]> container;
    private final DefaultKafkaProducerFactory<String, byte[]> dltProducer;

    /**
     * @param bootstrapServers Kafka
     * @param groupId the consumer group; instances of one service share it
     * @param maxAttempts deliveries of a record whose handler keeps failing, before it is dead-lettered
     */
    public KafkaEventDispatcher(String bootstrapServers, String groupId, EventDispatcher dispatcher, int concurrency,
                                int maxAttempts, String... topics) {
        this(bootstrapServers, groupId, dispatcher, concurrency, RetryPolicy.attempts(maxAttempts), null, topics);
    }

    /**
     * As above; with a Micrometer {@code registry}, the consumers' own metrics (among them
     * {@code kafka.consumer.fetch.manager.records.lag.max}) are bound to it.
     */
    public KafkaEventDispatcher(String bootstrapServers, String groupId, EventDispatcher dispatcher, int concurrency,
                                RetryPolicy retry, io.micrometer.core.instrument.MeterRegistry registry, String... topics) {
        int maxAttempts = retry.maxAttempts();
        Map<String, Object> consumer = new HashMap<>();
        consumer.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        consumer.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        consumer.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        Map<String, Object> producer = new HashMap<>();
        producer.put(org.apache.kafka.clients.producer.ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        this.dltProducer = new DefaultKafkaProducerFactory<>(producer, new StringSerializer(), new ByteArraySerializer());
        DeadLetterPublishingRecoverer dlt = new DeadLetterPublishingRecoverer(new KafkaTemplate<>(dltProducer),
                (record, e) -> new TopicPartition(record.topic() + DLT_SUFFIX, -1));
        dlt.setHeadersFunction((record, e) -> {
            Throwable cause = rootOnce(e);
            RecordHeaders headers = new RecordHeaders();
            headers.add(DLT_REASON, utf8(String.valueOf(cause.getMessage())));
            headers.add(DLT_HANDLER, utf8(cause instanceof HandlerFailedException h ? h.handlerKey() : ""));
            headers.add(DLT_ATTEMPTS, utf8(Integer.toString(cause instanceof PoisonEventException ? 1 : maxAttempts)));
            return headers;
        });
        DefaultErrorHandler errors = new DefaultErrorHandler((record, e) -> {
            if (TransientFailures.isTransient(e)) {
                // The database (not the handler) failed: never dead-letter or mark failed for that. Refusing to
                // recover makes spring-kafka seek back, so the record is retried, with back-off, until it is back.
                throw new TransientDispatchException(record, e);
            }
            @SuppressWarnings("unchecked")
            ConsumerRecord<String, byte[]> typed = (ConsumerRecord<String, byte[]>) record;
            if (rootOnce(e) instanceof HandlerFailedException failed) {
                dispatcher.markFailed(typed, failed);
            }
            dlt.accept(record, e);
            dispatcher.listener().deadLettered(String.valueOf(rootOnce(e).getMessage()));
        }, retry.toBackOff());
        errors.addNotRetryableExceptions(PoisonEventException.class);
        errors.setBackOffFunction((record, e) -> TransientFailures.isTransient(e) ? TRANSIENT_BACK_OFF : null);
        ContainerProperties properties = new ContainerProperties(topics);
        properties.setGroupId(groupId);
        properties.setAckMode(ContainerProperties.AckMode.BATCH); // after every record of the poll was handled
        properties.setMessageListener((BatchMessageListener<String, byte[]>) dispatcher::dispatchBatch);
        DefaultKafkaConsumerFactory<String, byte[]> consumers =
                new DefaultKafkaConsumerFactory<>(consumer, new StringDeserializer(), new ByteArrayDeserializer());
        if (registry != null) {
            consumers.addListener(new org.springframework.kafka.core.MicrometerConsumerListener<>(registry));
        }
        this.container = new ConcurrentMessageListenerContainer<>(consumers, properties);
        this.container.setConcurrency(concurrency);
        this.container.setCommonErrorHandler(errors);
    }

    public void start() {
        container.start();
    }

    /** Whether the consumers are running (started and not closed). */
    public boolean isRunning() {
        return container.isRunning();
    }

    /** How many consumers hold partitions right now (0 while a rebalance is under way or none are assigned). */
    public int assignedConsumers() {
        return (int) container.getContainers().stream()
                .filter(c -> c.getAssignedPartitions() != null && !c.getAssignedPartitions().isEmpty()).count();
    }

    @Override
    public synchronized void close() {
        if (container.isRunning()) {
            container.stop();
        }
        dltProducer.destroy();
    }

    private static org.springframework.util.backoff.BackOff transientBackOff() {
        org.springframework.util.backoff.ExponentialBackOff backOff =
                new org.springframework.util.backoff.ExponentialBackOff(500, 2.0);
        backOff.setMaxInterval(5_000);
        backOff.setMaxAttempts(6);
        return backOff;
    }

    /** Thrown by the recoverer to refuse recovery of a record that failed transiently: it is sought and retried. */
    private static final class TransientDispatchException extends RuntimeException {
        TransientDispatchException(ConsumerRecord<?, ?> record, Exception cause) {
            super("Transient failure at " + record.topic() + "-" + record.partition() + "@" + record.offset()
                    + "; retrying instead of dead-lettering", cause);
        }
    }

    /** The Once exception inside spring-kafka's wrapping, or the root cause. */
    private static Throwable rootOnce(Throwable e) {
        Throwable current = e;
        while (current != null) {
            if (current instanceof PoisonEventException || current instanceof HandlerFailedException) {
                return current;
            }
            current = current.getCause();
        }
        return e;
    }

    private static byte[] utf8(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }
}
