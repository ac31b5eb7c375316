package dev.once.dispatch;

import dev.once.spi.TransientFailures;
import dev.once.wire.WireFormat;
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
import org.springframework.kafka.event.ConsumerFailedToStartEvent;
import org.springframework.kafka.event.ConsumerStoppedEvent;
import org.springframework.kafka.listener.BatchMessageListener;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.listener.DeadLetterPublishingRecoverer;
import org.springframework.kafka.listener.DefaultErrorHandler;

/**
 * Consumes outbox topics with spring-kafka and hands every poll to the {@link EventDispatcher}, which claims a run of
 * TRANSACTIONAL records with one statement and handles it in one transaction. Offsets are
 * committed after every record of a poll was handled (its handlers' transactions have committed); a redelivery after
 * a crash is absorbed by the claims, so committing per poll rather than per record loses nothing.
 *
 * <p>With {@link Parking} on, a record whose handler fails parks its key in PostgreSQL, and its later records park
 * behind it, so the rest of the partition flows and the key keeps its order; a retrier runs parked keys again with
 * backoff ({@link ParkingPolicy}) and dead-letters an event that failed for its whole window. With parking off, a
 * failing handler is retried in place with exponential backoff ({@link RetryPolicy}), then its claim is marked
 * {@code failed} and the record goes to {@code <topic>.dlt}. Dead letters carry the headers {@code once-dlt-reason},
 * {@code once-dlt-handler} and {@code once-dlt-attempts}; a poison record goes there at once. A failure of the
 * database is retried in place until it passes: it is not the handler's.
 */
public final class KafkaEventDispatcher implements AutoCloseable {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(KafkaEventDispatcher.class);

    /** Between retries of a record whose failure was the database's: 0.5 s growing to 5 s, then round again. */
    private static final org.springframework.util.backoff.BackOff TRANSIENT_BACK_OFF = transientBackOff();

    private final ConcurrentMessageListenerContainer<String, byte[]> container;
    private final DefaultKafkaProducerFactory<String, byte[]> dltProducer;
    private final String groupId;
    private final java.util.List<String> topics;
    private volatile String stopped;
    private final ParkingLot parking;
    private final ParkedRetrier retrier;

    /** Consumer threads per instance by default: one per instance keeps a partition's records in order cheaply. */
    public static final int CONCURRENCY = 1;

    /**
     * What the dispatcher's consumers must do, whatever the application configures: no automatic offset commits
     * ({@code enable.auto.commit=false}), because an offset is committed only after every record of its poll was
     * handled and its claims committed; and {@code isolation.level=read_committed}, so that records of an aborted
     * Kafka transaction (a relay on Kafka Connect with exactly-once delivery) are never handled.
     */
    public static final Map<String, Object> REQUIRED_CONSUMER = Map.of(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
            ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");

    /**
     * Once's choice for the consumers unless the application makes its own: {@code auto.offset.reset=earliest}, so
     * that a new consumer group starts with the oldest retained event instead of skipping everything before it.
     */
    public static final Map<String, Object> DEFAULT_CONSUMER = Map.of(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");

    /** What the dead-letter producer must do: acknowledged on every in-sync replica, without duplicates of its own. */
    public static final Map<String, Object> REQUIRED_PRODUCER = Map.of(
            org.apache.kafka.clients.producer.ProducerConfig.ACKS_CONFIG, "all",
            org.apache.kafka.clients.producer.ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);

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
        this(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers),
                Map.of(org.apache.kafka.clients.producer.ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers),
                groupId, dispatcher, concurrency, retry, registry, topics);
    }

    /**
     * The dispatcher with the application's own client settings: {@code consumerSettings} for the consumers and
     * {@code producerSettings} for the dead-letter producer (bootstrap servers at least, and security, SSL, SASL and
     * client id as the application connects; a Spring Boot application's come from {@code spring.kafka.*}, then
     * {@code once.dispatcher.consumer.*} and {@code once.dispatcher.producer.*}). They replace {@link #DEFAULT_CONSUMER}
     * and yield to {@link #REQUIRED_CONSUMER} and {@link #REQUIRED_PRODUCER}; the serializers are the dispatcher's own.
     */
    public KafkaEventDispatcher(Map<String, Object> consumerSettings, Map<String, Object> producerSettings,
                                String groupId, EventDispatcher dispatcher, int concurrency, RetryPolicy retry,
                                io.micrometer.core.instrument.MeterRegistry registry, String... topics) {
        this(consumerSettings, producerSettings, groupId, dispatcher, concurrency, retry, Parking.off(), registry, topics);
    }

    /**
     * As above; with {@code parking} on, a record whose handler fails parks its key in PostgreSQL instead of being
     * retried in place ({@code retry} then applies to nothing but a parking that is off): the key's later records
     * park behind it, other keys and the partition's offsets move on, and a retrier runs parked keys again in the
     * background ({@link ParkingPolicy}).
     */
    public KafkaEventDispatcher(Map<String, Object> consumerSettings, Map<String, Object> producerSettings,
                                String groupId, EventDispatcher dispatcher, int concurrency, RetryPolicy retry,
                                Parking parking, io.micrometer.core.instrument.MeterRegistry registry, String... topics) {
        int maxAttempts = retry.maxAttempts();
        Map<String, Object> consumer = new HashMap<>(DEFAULT_CONSUMER);
        consumer.putAll(consumerSettings);
        consumer.putAll(REQUIRED_CONSUMER);
        Map<String, Object> producer = new HashMap<>(producerSettings);
        producer.putAll(REQUIRED_PRODUCER);
        producer.remove(org.apache.kafka.clients.producer.ProducerConfig.TRANSACTIONAL_ID_CONFIG);
        this.dltProducer = new DefaultKafkaProducerFactory<>(producer, new StringSerializer(), new ByteArraySerializer());
        DeadLetterPublishingRecoverer dlt = new DeadLetterPublishingRecoverer(new KafkaTemplate<>(dltProducer),
                (record, e) -> new TopicPartition(WireFormat.deadLetterTopic(record.topic()), -1));
        dlt.setHeadersFunction((record, e) -> {
            Throwable cause = rootOnce(e);
            RecordHeaders headers = new RecordHeaders();
            headers.add(WireFormat.DLT_REASON, utf8(String.valueOf(cause.getMessage())));
            headers.add(WireFormat.DLT_HANDLER, utf8(cause instanceof HandlerFailedException h ? h.handlerKey() : ""));
            int attempts = e instanceof ParkedRetrier.RetriesExhaustedException exhausted ? exhausted.attempts()
                    : cause instanceof PoisonEventException ? 1 : maxAttempts;
            headers.add(WireFormat.DLT_ATTEMPTS, utf8(Integer.toString(attempts)));
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
            log.warn("Dead-lettered {}-{}@{} to {}: {}", record.topic(), record.partition(), record.offset(),
                    WireFormat.deadLetterTopic(record.topic()), rootOnce(e).getMessage());
            dispatcher.listener().deadLettered(String.valueOf(rootOnce(e).getMessage()));
            if (rootOnce(e) instanceof SignatureRejectedException rejected) {
                dispatcher.listener().rejected(rejected.code());
            }
        }, retry.toBackOff());
        errors.addNotRetryableExceptions(PoisonEventException.class);
        // spring-kafka rethrows after each failed attempt to seek back, and its container logs that with a stack trace
        // at ERROR: once per retry and per dead letter. The line above says what happened to a record, once.
        errors.setLogLevel(org.springframework.kafka.KafkaException.Level.DEBUG);
        errors.setBackOffFunction((record, e) -> TransientFailures.isTransient(e) ? TRANSIENT_BACK_OFF : null);
        ContainerProperties properties = new ContainerProperties(topics);
        properties.setGroupId(groupId);
        properties.setAckMode(ContainerProperties.AckMode.BATCH); // after every record of the poll was handled
        if (parking.enabled()) {
            this.parking = new ParkingLot(parking.dataSource(), groupId, parking.policy());
            ParkingLot lot = this.parking;
            properties.setMessageListener((BatchMessageListener<String, byte[]>) records -> dispatcher.dispatchBatch(records, lot));
            this.retrier = new ParkedRetrier(lot, dispatcher, dispatcher.claimPolicy().lease(),
                    dispatcher.claimPolicy().ttl(), dlt::accept);
        } else {
            this.parking = null;
            this.retrier = null;
            properties.setMessageListener((BatchMessageListener<String, byte[]>) dispatcher::dispatchBatch);
        }
        DefaultKafkaConsumerFactory<String, byte[]> consumers =
                new DefaultKafkaConsumerFactory<>(consumer, new StringDeserializer(), new ByteArrayDeserializer());
        if (registry != null) {
            consumers.addListener(new org.springframework.kafka.core.MicrometerConsumerListener<>(registry));
        }
        this.container = new ConcurrentMessageListenerContainer<>(consumers, properties);
        this.container.setConcurrency(concurrency);
        this.container.setCommonErrorHandler(errors);
        this.container.setApplicationEventPublisher(this::consumerEvent);
        this.groupId = groupId;
        this.topics = java.util.List.of(topics);
    }

    /**
     * Notes why a consumer stopped while the dispatcher should run. spring-kafka stops a consumer that Kafka refuses
     * (an authentication or authorization failure: without {@code authExceptionRetryInterval} it does not retry, and
     * so logs the failure once rather than once per retry); any other stop but a normal one is a fault too. The
     * dispatcher stays down until restarted: the credentials are settings read at startup.
     */
    private void consumerEvent(Object event) {
        if (event instanceof ConsumerStoppedEvent consumerStopped
                && consumerStopped.getReason() != ConsumerStoppedEvent.Reason.NORMAL) {
            stopped = consumerStopped.getReason() == ConsumerStoppedEvent.Reason.AUTH
                    ? "Kafka refused the dispatcher's credentials: a consumer of group " + groupId + " stopped on an "
                            + "authentication or authorization failure (spring-kafka's KafkaMessageListenerContainer "
                            + "logged it); check spring.kafka.* security settings (security.protocol, sasl.mechanism, "
                            + "sasl.jaas.config, the SSL trust store), and that the principal may READ " + topics
                            + " and group " + groupId + "; then restart"
                    : "a consumer of group " + groupId + " stopped (" + consumerStopped.getReason() + "); see the log, "
                            + "then restart";
        } else if (event instanceof ConsumerFailedToStartEvent) {
            stopped = "a consumer of group " + groupId + " did not start within the container's consumer start "
                    + "timeout; see the log, then restart";
        }
    }

    /** The consumer group these consumers belong to. */
    public String groupId() {
        return groupId;
    }

    public void start() {
        container.start();
        if (retrier != null) {
            retrier.start();
        }
    }

    /**
     * The group's parked events, by status and reason (with parking on): for health's details. Holding is not a
     * fault: a rolling deploy holds a new version's events until its handler runs.
     */
    public Map<String, Object> parked() {
        if (parking == null) {
            return Map.of("enabled", false);
        }
        Map<String, Object> details = new java.util.LinkedHashMap<>();
        details.put("enabled", true);
        for (ParkingLot.Count count : parking.summary()) {
            String name = "failed".equals(count.status()) ? "failed" : count.reason();
            details.put(name + "-events", count.events());
            details.put(name + "-keys", count.keys());
        }
        return details;
    }

    /** Whether the consumers are running (started and not closed). */
    public boolean isRunning() {
        return container.isRunning();
    }

    /**
     * Why the dispatcher does not consume although it runs: a consumer stopped (above all because Kafka refused its
     * credentials), with what to check; empty while every consumer runs.
     */
    public java.util.Optional<String> problem() {
        return java.util.Optional.ofNullable(stopped);
    }

    /** How many consumers hold partitions right now (0 while a rebalance is under way or none are assigned). */
    public int assignedConsumers() {
        return (int) container.getContainers().stream()
                .filter(c -> c.getAssignedPartitions() != null && !c.getAssignedPartitions().isEmpty()).count();
    }

    @Override
    public synchronized void close() {
        if (retrier != null) {
            retrier.close();
        }
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
