package dev.once.relay;

import dev.once.wire.OutboxCodec;
import dev.once.wire.OutboxMessage;
import dev.once.wire.RecordSigning;
import dev.once.wire.WireFormat;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.Kind;
import io.micrometer.observation.transport.Propagator;
import io.micrometer.observation.transport.ReceiverContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes to Kafka with an idempotent producer ({@code enable.idempotence=true}, {@code acks=all}), in the
 * {@link WireFormat}: the record key is the aggregate id, so an aggregate's events share a partition and keep their
 * order; the value is the payload; the headers carry the event's envelope and every header of the row (such as
 * {@code traceparent}). A record larger than its topic takes is refused before it is sent, as one larger than
 * {@code max.request.size} is by the producer ({@link TopicLimits}), so that the aggregate's later events wait behind it.
 */
public final class KafkaTransport implements EventTransport {

    /** How long one batch waits for Kafka's acknowledgements by default. */
    public static final Duration ACK_TIMEOUT = Duration.ofSeconds(10);

    /**
     * What every relay's producer must do, whatever the application configures: {@code acks=all}, so that an
     * acknowledged event is on every in-sync replica before its row is deleted; {@code enable.idempotence=true}, so
     * that the producer's own retries neither duplicate nor reorder an aggregate's events. (Idempotence also caps
     * {@code max.in.flight.requests.per.connection} at 5.)
     */
    public static final Map<String, Object> REQUIRED = Map.of(ProducerConfig.ACKS_CONFIG, "all",
            ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);

    private static final Logger log = LoggerFactory.getLogger(KafkaTransport.class);

    private final Properties config;
    private final TopicRouter router;
    private final Duration ackTimeout;
    private final RecordSigning signing;
    private final KafkaProbe probe;
    private final TopicLimits limits;
    private final ObservationRegistry observations;
    private SharedProducer producer;
    private boolean broken;

    /**
     * @param settings the application's producer properties: bootstrap servers at least, and security, SSL, SASL and
     *        client id as the application connects (a Spring Boot application's come from {@code spring.kafka.*},
     *        then {@code once.outbox.relay.producer.*}); they replace Once's {@linkplain #defaults defaults} and
     *        yield to {@link #REQUIRED}
     * @param ackTimeout how long one {@link #send} waits for its acknowledgements before giving up
     * @param signing signs every record with the key ring's current key ({@link RecordSigning#off()}: unsigned, and
     *        a dispatcher that requires signatures dead-letters them)
     */
    public KafkaTransport(Map<String, Object> settings, TopicRouter router, Duration ackTimeout, RecordSigning signing) {
        this(settings, router, ackTimeout, signing, ObservationRegistry.NOOP);
    }

    /**
     * @param observations each record's publishing is the observation {@value #OBSERVATION} (tagged {@code topic} and
     *        {@code outcome}: published, refused, unavailable), a producer span whose parent is the span the event
     *        was appended in, read from its trace headers; the record carries those headers unchanged, so its
     *        consumers' spans have the producing request's span as parent too
     */
    public KafkaTransport(Map<String, Object> settings, TopicRouter router, Duration ackTimeout, RecordSigning signing,
                          ObservationRegistry observations) {
        Map<String, Object> config = defaults(ackTimeout);
        config.putAll(settings);
        config.putAll(REQUIRED);
        Object inFlight = config.get(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION);
        if (inFlight != null && Integer.parseInt(inFlight.toString()) > 5) {
            config.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5); // the most idempotence allows
        }
        this.config = new Properties();
        this.config.putAll(config);
        this.producer = new SharedProducer(this.config);
        this.router = router;
        this.ackTimeout = ackTimeout;
        this.signing = signing;
        this.probe = new KafkaProbe(config, ackTimeout);
        this.limits = new TopicLimits(probe, this::fitBatches);
        this.observations = observations;
    }

    /** The name of a record's publishing observation, and of its span. */
    public static final String OBSERVATION = "once.relay.publish";

    /**
     * Asks Kafka whether it answers and accepts the relay's credentials, so that a relay with nothing to publish yet
     * still learns (and its health says) that it could not.
     *
     * @throws KafkaRefusedException when Kafka refuses the credentials
     * @throws TransportUnavailableException when Kafka does not answer within the ack timeout
     */
    @Override
    public void verify() {
        probe.verify();
    }

    /**
     * The producer to send with, taken for one {@link #send} ({@link SharedProducer#release} when it ends). A producer
     * that met an authentication failure or any other fatal error refuses every later send, so it is replaced: once
     * the settings or the broker's ACLs are put right, the relay recovers without a restart. So is one whose batch
     * size a topic's limit changed. Other threads' sends may still be using the replaced one: it is closed when the
     * last of them ends, never under one of them.
     */
    private synchronized SharedProducer producer() {
        if (broken) {
            SharedProducer old = producer;
            producer = new SharedProducer(config);
            broken = false;
            old.replaced();
        }
        return producer.take();
    }

    /** A producer and how many sends are using it: replaced, it is closed when the last of them ends. */
    private static final class SharedProducer {

        final KafkaProducer<String, byte[]> producer;
        private int sends;
        private boolean replaced;

        SharedProducer(Properties config) {
            this.producer = new KafkaProducer<>(config, new StringSerializer(), new ByteArraySerializer());
        }

        synchronized SharedProducer take() {
            sends++;
            return this;
        }

        /** A send using it ended: every record it handed over was acknowledged, refused or given up. */
        synchronized void release() {
            if (--sends == 0 && replaced) {
                producer.close(Duration.ZERO);
            }
        }

        /** At once: closing a producer that met an authorization failure gracefully makes Kafka's client log an error. */
        synchronized void replaced() {
            replaced = true;
            if (sends == 0) {
                producer.close(Duration.ZERO);
            }
        }
    }

    /**
     * Makes the producer's batches no larger than {@code limit}, the largest batch {@code topic} takes: Kafka's
     * producer splits a batch the broker refuses into batches of {@code batch.size} again, so it would never deliver
     * a full batch to a topic whose limit is smaller.
     */
    private synchronized void fitBatches(String topic, int limit) {
        int batchSize = Integer.parseInt(String.valueOf(config.get(ProducerConfig.BATCH_SIZE_CONFIG)));
        if (limit < batchSize) {
            log.warn("Topic {} takes record batches of at most {} bytes (max.message.bytes): the relay's producer "
                    + "now makes batches of at most that, not {} (batch.size)", topic, limit, batchSize);
            config.put(ProducerConfig.BATCH_SIZE_CONFIG, limit);
            broken = true; // replaced before its next send
        }
    }

    private synchronized void replace(KafkaProducer<String, byte[]> failed) {
        if (failed == producer.producer) {
            broken = true;
        }
    }

    /**
     * Once's choices for a relay's producer, each replaced by the application's own setting of the same name:
     * {@code linger.ms=5} and {@code batch.size=128 KiB}, so that a drain's batch of events goes out in a few large
     * requests while a lone event waits no more than 5 ms; {@code max.block.ms} and {@code request.timeout.ms} within
     * the ack timeout, and {@code delivery.timeout.ms} at least 15 s, so that an unavailable broker fails a batch
     * (which stays pending and is retried with backoff) instead of blocking the relay.
     */
    public static Map<String, Object> defaults(Duration ackTimeout) {
        Map<String, Object> config = new HashMap<>();
        config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        config.put(ProducerConfig.BATCH_SIZE_CONFIG, 128 * 1024);
        config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) ackTimeout.toMillis());
        config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) Math.min(ackTimeout.toMillis(), 10_000));
        config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) Math.max(ackTimeout.toMillis(), 15_000));
        return config;
    }

    @Override
    public Delivery send(List<OutboxMessage> messages) {
        List<String> topicOf = messages.stream().map(router::topicFor).toList();
        limits.learn(topicOf); // before the producer is taken: a topic's limit may change its batch size
        SharedProducer shared = producer();
        KafkaProducer<String, byte[]> producer = shared.producer;
        Map<UUID, Future<RecordMetadata>> inFlight = new LinkedHashMap<>();
        Map<UUID, String> refused = new LinkedHashMap<>();
        Set<String> blocked = new HashSet<>();
        Set<String> topics = new LinkedHashSet<>();
        Set<String> limitsReadAgain = new HashSet<>();
        Publishing publishing = new Publishing(observations);
        try {
            for (int i = 0; i < messages.size(); i++) {
                OutboxMessage message = messages.get(i);
                if (blocked.contains(message.aggregate())) {
                    continue; // an earlier event of this aggregate was refused: keep its order, send nothing after it
                }
                ProducerRecord<String, byte[]> record = OutboxCodec.write(message, topicOf.get(i), signing);
                topics.add(record.topic());
                publishing.start(message, record.topic());
                String refusal = limits.refusal(record, limitsReadAgain);
                if (refusal == null) {
                    Future<RecordMetadata> future = sendOne(producer, record);
                    refusal = refusedAtOnce(producer, future, record.topic());
                    if (refusal == null) {
                        inFlight.put(message.id(), future);
                    }
                }
                if (refusal != null) {
                    refused.put(message.id(), refusal);
                    publishing.stop(message.id(), "refused");
                    blocked.add(message.aggregate());
                }
            }
            producer.flush();
            long deadline = System.nanoTime() + ackTimeout.toNanos();
            List<UUID> acknowledged = new ArrayList<>(inFlight.size());
            for (Map.Entry<UUID, Future<RecordMetadata>> entry : inFlight.entrySet()) {
                try {
                    entry.getValue().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                    acknowledged.add(entry.getKey());
                    publishing.stop(entry.getKey(), "published");
                } catch (ExecutionException e) {
                    if (!recordSpecific(e.getCause())) {
                        throw unavailable(producer, e.getCause(), topics);
                    }
                    if (e.getCause() instanceof org.apache.kafka.common.errors.RecordTooLargeException) {
                        limits.forget(topics); // the broker refused it: a topic's limit was lowered
                    }
                    refused.put(entry.getKey(), e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage());
                    publishing.stop(entry.getKey(), "refused");
                } catch (TimeoutException e) {
                    throw explainTimeout(producer, topics, e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new TransportUnavailableException("Interrupted while waiting for Kafka", e);
                }
            }
            return new Delivery(acknowledged, refused);
        } finally {
            publishing.stopAll("unavailable"); // the batch was given up: its rows stay pending
            shared.release();
        }
    }

    /**
     * The publishing observations of one {@link #send}: each started before its record is handed to the producer,
     * with the span the event was appended in as parent, and stopped with its outcome. Used by one thread.
     */
    private static final class Publishing {

        private static final Propagator.Getter<Map<String, String>> HEADERS = Map::get;

        private final ObservationRegistry registry;
        private final Map<UUID, Observation> open = new HashMap<>();

        Publishing(ObservationRegistry registry) {
            this.registry = registry;
        }

        void start(OutboxMessage message, String topic) {
            if (registry.isNoop()) {
                return;
            }
            ReceiverContext<Map<String, String>> context = new ReceiverContext<>(HEADERS, Kind.PRODUCER);
            context.setCarrier(message.headers());
            context.setRemoteServiceName("kafka");
            open.put(message.id(), Observation.createNotStarted(OBSERVATION, () -> context, registry)
                    .lowCardinalityKeyValue("topic", topic)
                    .highCardinalityKeyValue("once.event.id", message.id().toString()).start());
        }

        void stop(UUID id, String outcome) {
            Observation observation = open.remove(id);
            if (observation != null) {
                observation.lowCardinalityKeyValue("outcome", outcome).stop();
            }
        }

        void stopAll(String outcome) {
            open.values().forEach(o -> o.lowCardinalityKeyValue("outcome", outcome).stop());
            open.clear();
        }
    }

    /**
     * Hands {@code record} to the producer. The producer throws rather than returning a failed future when it can
     * send nothing at all (it is closed, or an earlier failure left it in a fatal state, as an authentication failure
     * does an idempotent producer's): then it is replaced and the batch given up.
     */
    private Future<RecordMetadata> sendOne(KafkaProducer<String, byte[]> producer, ProducerRecord<String, byte[]> record) {
        try {
            return producer.send(record);
        } catch (KafkaException | IllegalStateException e) {
            if (recordSpecific(e)) {
                return failedWith(e);
            }
            replace(producer);
            throw unavailable(producer, e, List.of(record.topic()));
        }
    }

    private static Future<RecordMetadata> failedWith(Throwable failure) {
        java.util.concurrent.CompletableFuture<RecordMetadata> failed = new java.util.concurrent.CompletableFuture<>();
        failed.completeExceptionally(failure);
        return failed;
    }

    /**
     * The reason Kafka refused the record before sending it (e.g. too large), or null while it is in flight.
     *
     * @throws TransportUnavailableException when it failed for a reason that is not this record's (no metadata
     *         within max.block.ms, refused credentials): the whole batch is given up now (it stays pending) rather
     *         than parked, or blocked on again for every record
     */
    private String refusedAtOnce(KafkaProducer<String, byte[]> producer, Future<RecordMetadata> future, String topic) {
        if (!future.isDone()) {
            return null;
        }
        try {
            future.get();
            return null;
        } catch (ExecutionException e) {
            if (!recordSpecific(e.getCause())) {
                throw unavailable(producer, e.getCause(), List.of(topic));
            }
            return e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /**
     * Why Kafka did not take a batch for {@code topics}, said so that an operator can act on it: refused credentials
     * or rights ({@link KafkaRefusedException}, recognised by the failure's type; the producer is replaced, as such a
     * failure leaves it unable to send), no answer, a missing topic ({@link KafkaProbe#explainTimeout}), or Kafka's
     * own words.
     */
    private TransportUnavailableException unavailable(KafkaProducer<String, byte[]> producer, Throwable failure,
                                                      Collection<String> topics) {
        Throwable refusal = KafkaProbe.refusal(failure);
        if (refusal != null) {
            replace(producer);
            return probe.refused(refusal);
        }
        if (failure instanceof org.apache.kafka.common.errors.TimeoutException) {
            return explainTimeout(producer, topics, failure);
        }
        return new TransportUnavailableException("Kafka did not take the batch: " + failure, failure);
    }

    /**
     * A missing topic is refused like credentials are: the producer is replaced too, since it would otherwise ask for
     * the topic's metadata (and warn that it is unknown) every second for minutes after the batch was given up.
     */
    private TransportUnavailableException explainTimeout(KafkaProducer<String, byte[]> producer, Collection<String> topics,
                                                       Throwable timedOut) {
        TransportUnavailableException explained = probe.explainTimeout(topics, timedOut);
        if (explained instanceof KafkaRefusedException) {
            replace(producer);
        }
        return explained;
    }

    /**
     * Whether Kafka refused this record for what it is (and would refuse it again), rather than because the broker,
     * the topic or the credentials are unavailable: only such records are parked.
     */
    static boolean recordSpecific(Throwable cause) {
        return cause instanceof org.apache.kafka.common.errors.RecordTooLargeException
                || cause instanceof org.apache.kafka.common.errors.InvalidTopicException // routed to a name Kafka refuses
                || cause instanceof org.apache.kafka.common.errors.RecordBatchTooLargeException
                || cause instanceof org.apache.kafka.common.InvalidRecordException
                || cause instanceof org.apache.kafka.common.errors.SerializationException;
    }

    /**
     * Closes the producer, giving what it has in flight 5 s; a broken one at once (closing one that met an
     * authorization failure gracefully makes Kafka's client log an error with a stack trace, as it tries to abort a
     * transaction an idempotent producer does not have).
     */
    @Override
    public synchronized void close() {
        producer.producer.close(broken ? Duration.ZERO : Duration.ofSeconds(5));
    }
}
