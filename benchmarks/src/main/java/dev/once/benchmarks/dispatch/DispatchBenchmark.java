package dev.once.benchmarks.dispatch;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.dispatch.DispatchListener;
import dev.once.dispatch.EventDispatcher;
import dev.once.dispatch.HandlerRegistration;
import dev.once.dispatch.KafkaEventDispatcher;
import dev.once.dispatch.Parking;
import dev.once.dispatch.ParkingPolicy;
import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.IdempotencyStore;
import dev.once.idempotency.OnceMigrations;
import dev.once.test.PostgresServer;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.test.TestPostgres;
import dev.once.test.TestTracing;
import dev.once.wire.RecordSigning;
import dev.once.wire.SigningKeys;
import dev.once.wire.WireFormat;
import io.micrometer.observation.ObservationRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.listener.BatchMessageListener;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.listener.MessageListener;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Events/s through the dispatcher with a TRANSACTIONAL handler that inserts one row per event, against the same
 * handler (one row, one transaction) on a plain spring-kafka listener without claims, the at-least-once baseline, and
 * against a plain batch listener with one transaction and one multi-row insert per poll, as a careful team batches
 * by hand, and the same batch listener inserting event by event, the floor of a handler called once per event.
 * Both consume the same backlog, each with a group of its own, in the same run, each rate from the variant's first
 * effect to its last (the consumer's start left out); the backlog is signed as a relay signs
 * it, and the dispatcher runs twice, without verifying ({@code once.outbox.signing.mode=off}) and verifying every
 * record ({@code require}), twice each in the order off, require, require, off; then tracing off and on (Micrometer
 * Tracing over OpenTelemetry, every trace sampled, spans discarded; each record carries a {@code traceparent}), ABBA,
 * with the cost of one handler's span alone on one thread; and a batch handler ({@code transactionalBatch}, one JDBC
 * batch per call) against the per-event handler, ABBA, beside the floor of its design (the dispatcher's claim
 * statements made directly by a plain batch listener). Options: {@code --events 20000}; {@code --events 1000000 --heap} runs the dispatcher once
 * without and once with verification over a large backlog (no plain listener) and prints the heap after GC every 10 s.
 */
public final class DispatchBenchmark {

    /** The key ring the backlog is signed with, and the {@code require} variant verifies with. */
    private static final RecordSigning SIGNING = RecordSigning.require(
            SigningKeys.of(Map.of("bench-1", "a benchmark key of thirty-two bytes or more"), null));

    private DispatchBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int events = args.length >= 2 && args[0].equals("--events") ? Integer.parseInt(args[1]) : 20_000;
        boolean heapOnly = java.util.Arrays.asList(args).contains("--heap");
        PostgresServer server = TestPostgres.server();
        String bootstrap = TestKafka.bootstrapServers();
        String schema = "bench_dispatch_" + Long.toHexString(System.nanoTime());
        execute(server, "CREATE SCHEMA " + schema);
        String topic = "bench-dispatch-" + Long.toHexString(System.nanoTime());
        TestKafka.createTopic(topic, 4);
        TestKafka.createTopic(topic + WireFormat.DEAD_LETTER_SUFFIX, 1);
        try (HikariDataSource ds = TestDatabase.newDataSource(schema, 8, null)) {
            OnceMigrations.migrate(ds);
            JdbcTemplate jdbc = new JdbcTemplate(ds);
            // each effect's time of insert: a variant's rate is from its first effect to its last, without the consumer's
            // start (joining its group, finding its offsets), which is the same for every variant and would be noise
            jdbc.execute("CREATE TABLE effect (variant text NOT NULL, event_id uuid NOT NULL, "
                    + "at timestamptz NOT NULL DEFAULT clock_timestamp())");
            produce(bootstrap, topic, events, heapOnly ? PARKED_KEYS : 0);
            System.out.printf(Locale.ROOT, "dispatch benchmark: %d events, 4 partitions, on %s and Kafka %s%n", events, server, bootstrap);

            DataSourceTransactionManager transactions = new DataSourceTransactionManager(ds);
            TransactionTemplate tx = new TransactionTemplate(transactions);
            double plain = heapOnly ? Double.NaN : timed(jdbc, "plain", events, () -> plainListener(bootstrap, topic,
                    (MessageListener<String, byte[]>) record -> tx.executeWithoutResult(s -> jdbc.update(
                            "INSERT INTO effect VALUES ('plain', ?)", eventId(record)))));
            // the floor of a per-event handler: one transaction per poll, one insert per event, no claims
            double perEvent = heapOnly ? Double.NaN : timed(jdbc, "per-event", events, () -> plainListener(bootstrap, topic,
                    (BatchMessageListener<String, byte[]>) records -> tx.executeWithoutResult(s -> records.forEach(r ->
                            jdbc.update("INSERT INTO effect VALUES ('per-event', ?)", eventId(r))))));
            // what a careful team writes without Once: one transaction per poll, one multi-row insert, no claims
            double batchedFirst = heapOnly ? Double.NaN : timed(jdbc, "batched", events,
                    () -> handBatched(tx, jdbc, bootstrap, topic, "batched"));
            IdempotencyStore store = IdempotencyStore.create(ds);
            dev.once.idempotency.HandlerClaimStore claims = dev.once.idempotency.HandlerClaimStore.create(ds);
            // ABBA: off, require, require, off, so that warm-up and drift weigh on both variants alike
            String[] order = heapOnly ? new String[] {"off-1", "require-1"} : new String[] {"off-1", "require-1", "require-2", "off-2"};
            double[] runs = new double[order.length];
            for (int i = 0; i < order.length; i++) {
                RecordSigning signing = order[i].startsWith("off") ? RecordSigning.off() : SIGNING;
                if (heapOnly) {
                    // parking on, with 1,000 keys of this topic parked for good (their events park behind them)
                    String group = order[i] + "-" + UUID.randomUUID();
                    parkKeys(jdbc, group, topic, PARKED_KEYS);
                    runs[i] = timed(jdbc, order[i], events, dispatcher(claims, transactions, jdbc, bootstrap, topic,
                            order[i], signing, ObservationRegistry.NOOP, Parking.on(ds, ParkingPolicy.ofDefaults()), group));
                    System.out.printf(Locale.ROOT, "  %-10s %8.0f events/s, parked behind the 1,000 keys: %d%n",
                            order[i], runs[i], jdbc.queryForObject("SELECT count(*) FROM once_parked_event WHERE "
                                    + "group_id = ? AND reason = 'behind'", Long.class, group));
                } else {
                    runs[i] = timed(jdbc, order[i], events, dispatcher(claims, transactions, jdbc, bootstrap, topic,
                            order[i], signing, ObservationRegistry.NOOP));
                    System.out.printf(Locale.ROOT, "  %-10s %8.0f events/s%n", order[i], runs[i]);
                }
            }
            // parking on and off, nothing failing, ABBA, signing off: the cost of looking up a poll's keys
            String[] parkingOrder = heapOnly ? new String[0]
                    : new String[] {"parking-on-1", "parking-off-1", "parking-off-2", "parking-on-2"};
            double[] parkingRuns = new double[parkingOrder.length];
            for (int i = 0; i < parkingOrder.length; i++) {
                String variant = parkingOrder[i];
                parkingRuns[i] = timed(jdbc, variant, events, dispatcher(claims, transactions, jdbc, bootstrap, topic,
                        variant, RecordSigning.off(), ObservationRegistry.NOOP, variant.startsWith("parking-on")
                                ? Parking.on(ds, ParkingPolicy.ofDefaults()) : Parking.off(), variant + "-" + UUID.randomUUID()));
                System.out.printf(Locale.ROOT, "  %-13s %8.0f events/s%n", variant, parkingRuns[i]);
            }
            // the same claims, with a batch handler writing each call's events with one JDBC batch (ABBA against the
            // per-event handler, signing off)
            String[] batchOrder = heapOnly ? new String[0] : new String[] {"batch-1", "event-1", "event-2", "batch-2"};
            double[] batchRuns = new double[batchOrder.length];
            for (int i = 0; i < batchOrder.length; i++) {
                String variant = batchOrder[i];
                batchRuns[i] = timed(jdbc, variant, events, variant.startsWith("batch")
                        ? batchDispatcher(claims, transactions, jdbc, bootstrap, topic, variant)
                        : dispatcher(claims, transactions, jdbc, bootstrap, topic, variant, RecordSigning.off(),
                                ObservationRegistry.NOOP));
                System.out.printf(Locale.ROOT, "  %-10s %8.0f events/s%n", variant, batchRuns[i]);
            }
            // the hand-batched listener once more, after the batch handler as it ran once before the dispatcher: its
            // mean is the baseline, so that the time between them weighs on both alike
            double batched = heapOnly ? Double.NaN : (batchedFirst + timed(jdbc, "batched-2", events,
                    () -> handBatched(tx, jdbc, bootstrap, topic, "batched-2"))) / 2;
            // the floor of the design: the dispatcher's claim statements made directly by a plain batch listener, in one
            // transaction per poll, with the effects as one JDBC batch (a batch handler's) or one insert per event (a
            // per-event handler's); claims written once, inserted completed (today's), or twice, inserted in progress
            // and completed by one update (before); ABBA
            String[] floorOrder = heapOnly ? new String[0] : new String[] {"floor-batch-1w-1", "floor-batch-2w-1",
                    "floor-event-1w-1", "floor-event-2w-1", "floor-event-2w-2", "floor-event-1w-2", "floor-batch-2w-2",
                    "floor-batch-1w-2"};
            Map<String, Double> floors = new HashMap<>();
            for (String variant : floorOrder) {
                double rate = timed(jdbc, variant, events, () -> claimsFloor(store, claims, tx, jdbc, bootstrap, topic, variant));
                floors.merge(variant.substring(0, variant.length() - 2), rate / 2, Double::sum);
                System.out.printf(Locale.ROOT, "  %-17s %8.0f events/s%n", variant, rate);
            }
            double once = heapOnly ? runs[0] : (runs[0] + runs[3]) / 2;
            double signed = heapOnly ? runs[1] : (runs[1] + runs[2]) / 2;
            // tracing off and on (OpenTelemetry, every trace sampled, spans discarded), ABBA, signing off
            String[] traced = heapOnly ? new String[0] : new String[] {"untraced-1", "traced-1", "traced-2", "untraced-2"};
            double[] tracing = new double[traced.length];
            try (TestTracing on = TestTracing.discarding()) {
                for (int i = 0; i < traced.length; i++) {
                    tracing[i] = timed(jdbc, traced[i], events, dispatcher(claims, transactions, jdbc, bootstrap, topic,
                            traced[i], RecordSigning.off(),
                            traced[i].startsWith("traced") ? on.observations() : ObservationRegistry.NOOP));
                    System.out.printf(Locale.ROOT, "  %-10s %8.0f events/s%n", traced[i], tracing[i]);
                }
            }
            double verifyMicros = verifyCost(topic);
            System.out.printf(Locale.ROOT, "%-50s %10.1f us per record (%.1f %% of a record's time at the unsigned rate)%n",
                    "signature check alone, one thread", verifyMicros, verifyMicros * once / 1e4);
            System.out.printf(Locale.ROOT, "%-50s %10.0f events/s%n", "plain spring-kafka listener", plain);
            System.out.printf(Locale.ROOT, "%-50s %10.0f events/s  ratio %.2fx (mean of %.0f first and %.0f last)%n",
                    "plain batch listener, one tx per poll", batched, batched / plain, batchedFirst,
                    2 * batched - batchedFirst);
            System.out.printf(Locale.ROOT, "%-50s %10.0f events/s  ratio %.2fx%n", "plain batch listener, one insert per event",
                    perEvent, perEvent / plain);
            System.out.printf(Locale.ROOT, "%-50s %10.2fx of the batch listener, %.2fx of one insert per event%n",
                    "Once dispatcher, signing off", once / batched, once / perEvent);
            System.out.printf(Locale.ROOT, "%-50s %10.0f events/s  ratio %.2fx%n", "Once dispatcher (TRANSACTIONAL), signing off, mean",
                    once, once / plain);
            System.out.printf(Locale.ROOT, "%-50s %10.0f events/s  ratio %.2fx, %.2fx of signing off%n",
                    "Once dispatcher (TRANSACTIONAL), require, mean", signed, signed / plain, signed / once);
            if (!heapOnly) {
                double batchMean = (batchRuns[0] + batchRuns[3]) / 2;
                double eventMean = (batchRuns[1] + batchRuns[2]) / 2;
                System.out.printf(Locale.ROOT, "%-50s %10.0f events/s  %.2fx of the per-event handler, %.2fx of the "
                        + "hand-batched listener%n", "Once dispatcher, batch handler (one JDBC batch per call)", batchMean,
                        batchMean / eventMean, batchMean / batched);
                double floorBatch = floors.get("floor-batch-1w");
                System.out.printf(Locale.ROOT, "%-50s %10.0f events/s  %.2fx of the hand-batched listener; the batch "
                        + "handler at %.2fx of it%n", "floor: one-write claims + one JDBC batch", floorBatch,
                        floorBatch / batched, batchMean / floorBatch);
                System.out.printf(Locale.ROOT, "%-50s %10.0f events/s  %.2fx of the hand-batched listener; one write "
                        + "is %.2fx of two%n", "floor: two-write claims + one JDBC batch", floors.get("floor-batch-2w"),
                        floors.get("floor-batch-2w") / batched, floorBatch / floors.get("floor-batch-2w"));
                System.out.printf(Locale.ROOT, "%-50s %10.0f events/s  %.2fx of one insert per event; the per-event "
                        + "handler at %.2fx of it%n", "floor: one-write claims + one insert per event",
                        floors.get("floor-event-1w"), floors.get("floor-event-1w") / perEvent,
                        eventMean / floors.get("floor-event-1w"));
                System.out.printf(Locale.ROOT, "%-50s %10.0f events/s  one write is %.2fx of two%n",
                        "floor: two-write claims + one insert per event", floors.get("floor-event-2w"),
                        floors.get("floor-event-1w") / floors.get("floor-event-2w"));
                double parkingOn = (parkingRuns[0] + parkingRuns[3]) / 2;
                double parkingOff = (parkingRuns[1] + parkingRuns[2]) / 2;
                System.out.printf(Locale.ROOT, "%-50s %10.0f events/s  %.3fx of parking off (%.0f events/s)%n",
                        "Once dispatcher, parking on, nothing failing", parkingOn, parkingOn / parkingOff, parkingOff);
                double untracedMean = (tracing[0] + tracing[3]) / 2;
                double tracedMean = (tracing[1] + tracing[2]) / 2;
                System.out.printf(Locale.ROOT, "%-50s %10.0f events/s  ratio %.2fx%n",
                        "Once dispatcher, tracing off, mean", untracedMean, untracedMean / plain);
                System.out.printf(Locale.ROOT, "%-50s %10.0f events/s  ratio %.2fx, %.2fx of tracing off%n",
                        "Once dispatcher, tracing on (OTel), mean", tracedMean, tracedMean / plain, tracedMean / untracedMean);
                double spanMicros = handlerSpanCost(topic);
                System.out.printf(Locale.ROOT, "%-50s %10.1f us per handler turn (%.1f %% of an event's time at the "
                        + "untraced rate)%n", "a handler's span alone, one thread", spanMicros, spanMicros * untracedMean / 1e4);
            }
        } finally {
            execute(server, "DROP SCHEMA " + schema + " CASCADE");
        }
    }

    /**
     * The floor of verifying: microseconds per {@link RecordSigning#verify} of a record like the backlog's, on one
     * thread, after a warm-up (what the consumer thread pays per record, without Kafka or the database).
     */
    private static double verifyCost(String topic) {
        ProducerRecord<String, byte[]> sent = event(topic, 1);
        ConsumerRecord<String, byte[]> received = new ConsumerRecord<>(topic, 0, 0L, sent.key(), sent.value());
        sent.headers().forEach(h -> received.headers().add(h));
        int valid = 0;
        for (int i = 0; i < 200_000; i++) {
            valid += SIGNING.verify(received).accepted() ? 1 : 0;
        }
        long start = System.nanoTime();
        for (int i = 0; i < 500_000; i++) {
            valid += SIGNING.verify(received).accepted() ? 1 : 0;
        }
        double micros = (System.nanoTime() - start) / 1e3 / 500_000;
        if (valid != 700_000) {
            throw new IllegalStateException("a signed record did not verify");
        }
        return micros;
    }

    /**
     * The floor of tracing a handler: microseconds per handler turn of what the dispatcher does with a tracer (a
     * consumer observation whose parent is restored from the record's headers, tagged as the dispatcher tags it, its
     * scope opened around the handler and closed, stopped), on one thread after a warm-up, spans batched and discarded.
     */
    private static double handlerSpanCost(String topic) {
        ProducerRecord<String, byte[]> sent = event(topic, 1);
        ConsumerRecord<String, byte[]> received = new ConsumerRecord<>(topic, 0, 0L, sent.key(), sent.value());
        sent.headers().forEach(h -> received.headers().add(h));
        io.micrometer.observation.transport.Propagator.Getter<org.apache.kafka.common.header.Headers> headers =
                (carrier, name) -> {
                    org.apache.kafka.common.header.Header h = carrier.lastHeader(name);
                    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
                };
        try (TestTracing tracing = TestTracing.discarding()) {
            Runnable turn = () -> {
                io.micrometer.observation.transport.ReceiverContext<org.apache.kafka.common.header.Headers> context =
                        new io.micrometer.observation.transport.ReceiverContext<>(headers,
                                io.micrometer.observation.transport.Kind.CONSUMER);
                context.setCarrier(received.headers());
                io.micrometer.observation.Observation observation = io.micrometer.observation.Observation
                        .createNotStarted(EventDispatcher.OBSERVATION, () -> context, tracing.observations())
                        .lowCardinalityKeyValue("handler", "bench")
                        .highCardinalityKeyValue("once.event.id", eventId(received).toString())
                        .highCardinalityKeyValue("messaging.destination.name", topic).start();
                try (io.micrometer.observation.Observation.Scope scope = observation.openScope()) {
                    // the handler would run here
                }
                observation.lowCardinalityKeyValue("outcome", "handled").stop();
            };
            for (int i = 0; i < 200_000; i++) {
                turn.run();
            }
            long start = System.nanoTime();
            for (int i = 0; i < 500_000; i++) {
                turn.run();
            }
            return (System.nanoTime() - start) / 1e3 / 500_000;
        }
    }

    /** A spring-kafka container with {@code listener} (a record or a batch listener), one consumer thread, no claims. */
    private static Runnable plainListener(String bootstrap, String topic, Object listener) {
        Map<String, Object> consumer = new HashMap<>();
        consumer.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        consumer.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        ContainerProperties properties = new ContainerProperties(topic);
        properties.setGroupId("plain-" + UUID.randomUUID());
        properties.setMessageListener(listener);
        ConcurrentMessageListenerContainer<String, byte[]> container = new ConcurrentMessageListenerContainer<>(
                new DefaultKafkaConsumerFactory<>(consumer, new StringDeserializer(), new ByteArrayDeserializer()), properties);
        container.start();
        return container::stop;
    }

    /** A dispatcher whose handler records its effects as {@code variant}; claims of each variant are its own. */
    private static ConsumerStart dispatcher(dev.once.idempotency.HandlerClaimStore store, DataSourceTransactionManager transactions, JdbcTemplate jdbc,
                                            String bootstrap, String topic, String variant, RecordSigning signing,
                                            ObservationRegistry observations) {
        return dispatcher(store, transactions, jdbc, bootstrap, topic, variant, signing, observations, Parking.off(),
                variant + "-" + UUID.randomUUID());
    }

    /** As above, parking as {@code parking} says, in consumer group {@code group}. */
    private static ConsumerStart dispatcher(dev.once.idempotency.HandlerClaimStore store, DataSourceTransactionManager transactions, JdbcTemplate jdbc,
                                            String bootstrap, String topic, String variant, RecordSigning signing,
                                            ObservationRegistry observations, Parking parking, String group) {
        return () -> {
            EventDispatcher dispatcher = new EventDispatcher(store, transactions, List.of(HandlerRegistration.transactional(
                    "OrderPlaced", 1, variant, event -> jdbc.update("INSERT INTO effect VALUES (?, ?)", variant, event.eventId()))),
                    ClaimPolicy.ofDefaults(), signing, DispatchListener.NONE, observations);
            KafkaEventDispatcher consumers = new KafkaEventDispatcher(
                    Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
                    Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap), group, dispatcher, 1,
                    dev.once.dispatch.RetryPolicy.ofDefaults(), parking, null, topic);
            consumers.start();
            return consumers::close;
        };
    }

    /** What a careful team writes without Once: one transaction per poll, one multi-row insert, no claims. */
    private static Runnable handBatched(TransactionTemplate tx, JdbcTemplate jdbc, String bootstrap, String topic,
                                        String variant) {
        return plainListener(bootstrap, topic, (BatchMessageListener<String, byte[]>) records -> tx.executeWithoutResult(
                s -> jdbc.batchUpdate("INSERT INTO effect VALUES (?, ?)", records.stream()
                        .map(r -> new Object[] {variant, eventId(r)}).toList())));
    }

    /** The keys parked for good in the heap run, so every poll's look-up meets a populated table. */
    private static final int PARKED_KEYS = 1_000;

    /**
     * The floor variant {@code variant} ({@code floor-<batch|event>-<1w|2w>-n}): a plain batch listener making the
     * dispatcher's claim statements itself, with one-write claims in {@code once_handler_claim} ({@code claimCompleted},
     * as the dispatcher) or two-write ones in {@code idempotency_record}, where claims were kept before
     * ({@code claimFresh} then {@code markAllSucceeded}), and its effects as one JDBC batch or one insert per event.
     */
    private static Runnable claimsFloor(IdempotencyStore store, dev.once.idempotency.HandlerClaimStore claims,
                                        TransactionTemplate tx, JdbcTemplate jdbc, String bootstrap,
                                        String topic, String variant) {
        boolean batch = variant.contains("-batch-");
        boolean oneWrite = variant.contains("-1w-");
        dev.once.idempotency.Route route = dev.once.idempotency.Route.of("OrderPlaced:v1:" + variant);
        dev.once.idempotency.StoredResponse handled = dev.once.idempotency.StoredResponse.of(200, null, new byte[0]);
        return plainListener(bootstrap, topic, (BatchMessageListener<String, byte[]>) records -> tx.executeWithoutResult(s -> {
            List<dev.once.idempotency.IdempotencyScope> scopes = records.stream().map(r -> dev.once.idempotency
                    .IdempotencyScope.of("acme", "alice", route, eventId(r).toString())).toList();
            List<String> hashes = records.stream().map(r -> dev.once.idempotency.RequestFingerprint.ofPayload(route,
                    "application/json", r.value())).toList();
            List<dev.once.idempotency.ClaimToken> tokens = oneWrite ? List.of()
                    : store.claimFresh(scopes, hashes, ClaimPolicy.ofDefaults());
            if (oneWrite) {
                claims.claimCompleted(scopes, hashes, ClaimPolicy.ofDefaults());
            }
            if (batch) {
                jdbc.batchUpdate("INSERT INTO effect VALUES (?, ?)", records.stream()
                        .map(r -> new Object[] {variant, eventId(r)}).toList());
            } else {
                records.forEach(r -> jdbc.update("INSERT INTO effect VALUES (?, ?)", variant, eventId(r)));
            }
            if (!oneWrite) {
                store.markAllSucceeded(tokens.stream().filter(java.util.Objects::nonNull).toList(), handled);
            }
        }));
    }

    /**
     * Parks keys {@code p-0} to {@code p-<keys-1>} of {@code topic} for {@code group}, failed for good, on the
     * partitions Kafka's default partitioner gives them (4), so that the backlog's events of those keys park behind.
     */
    private static void parkKeys(JdbcTemplate jdbc, String group, String topic, int keys) {
        List<Object[]> rows = new ArrayList<>(keys);
        for (int k = 0; k < keys; k++) {
            byte[] key = ("p-" + k).getBytes(StandardCharsets.UTF_8);
            int partition = org.apache.kafka.common.utils.Utils.toPositive(
                    org.apache.kafka.common.utils.Utils.murmur2(key)) % 4;
            rows.add(new Object[] {group, topic, partition, -1L - k, "p-" + k});
        }
        jdbc.batchUpdate("""
                INSERT INTO once_parked_event (group_id, topic, kafka_partition, kafka_offset, record_key,
                    record_timestamp, header_names, header_values, payload, status, reason, next_attempt_at)
                VALUES (?, ?, ?, ?, ?, 0, '{}', '{}', '{}', 'failed', 'failing', 'infinity')
                """, rows);
    }

    /** A dispatcher whose batch handler writes each call's events as {@code variant} with one JDBC batch. */
    private static ConsumerStart batchDispatcher(dev.once.idempotency.HandlerClaimStore store, DataSourceTransactionManager transactions,
                                                 JdbcTemplate jdbc, String bootstrap, String topic, String variant) {
        return () -> {
            EventDispatcher dispatcher = new EventDispatcher(store, transactions, List.of(
                    HandlerRegistration.transactionalBatch("OrderPlaced", 1, variant, batch -> jdbc.batchUpdate(
                            "INSERT INTO effect VALUES (?, ?)", batch.stream()
                                    .map(e -> new Object[] {variant, e.eventId()}).toList()))),
                    ClaimPolicy.ofDefaults(), RecordSigning.off());
            KafkaEventDispatcher consumers = new KafkaEventDispatcher(bootstrap, variant + "-" + UUID.randomUUID(), dispatcher,
                    1, 3, topic);
            consumers.start();
            return consumers::close;
        };
    }

    /**
     * Starts a consumer, waits until all {@code events} effects of {@code variant} exist, and returns events/s from the
     * first effect to the last (by the database's clock, as each was inserted), so that the consumer's start, the same
     * for every variant, does not weigh on the rate; it prints the start and the rate with it. Every 10 s it prints
     * the heap in use after a full GC, so that a long backlog shows whether memory stays flat.
     */
    private static double timed(JdbcTemplate jdbc, String variant, int events, ConsumerStart start) throws Exception {
        long begin = System.nanoTime();
        long nextSample = begin;
        Runnable stop = start.start();
        try {
            long done;
            while ((done = jdbc.queryForObject("SELECT count(*) FROM effect WHERE variant = ?", Long.class, variant)) < events) {
                if (System.nanoTime() >= nextSample) {
                    System.gc();
                    Runtime rt = Runtime.getRuntime();
                    System.out.printf(Locale.ROOT, "  %s t=%3ds handled=%8d heap after GC=%4d MiB%n", variant,
                            (System.nanoTime() - begin) / 1_000_000_000L, done, (rt.totalMemory() - rt.freeMemory()) >> 20);
                    nextSample = System.nanoTime() + 10_000_000_000L;
                }
                LockSupport.parkNanos(200_000_000L);
            }
            double wall = (System.nanoTime() - begin) / 1e9;
            double span = jdbc.queryForObject("SELECT extract(epoch FROM max(at) - min(at)) FROM effect WHERE variant = ?",
                    Double.class, variant);
            System.out.printf(Locale.ROOT, "  %s: %.1f s, of which %.1f s from the first effect to the last (%.0f "
                    + "events/s with the start)%n", variant, wall, span, events / wall);
            return (events - 1) / span;
        } finally {
            stop.run();
            // every variant starts on empty tables, as new events meet the right end of the claims' key: the
            // backlog's ids are the same for every variant, and a variant's claims among an earlier one's would
            // land all over the key's index; and the count above reads one variant's rows, not every one's before
            jdbc.execute("TRUNCATE effect, once_handler_claim, idempotency_record, once_parked_event");
        }
    }

    @FunctionalInterface
    interface ConsumerStart {
        Runnable start() throws Exception;
    }

    private static UUID eventId(ConsumerRecord<String, byte[]> record) {
        return UUID.fromString(new String(record.headers().lastHeader(WireFormat.EVENT_ID).value(), StandardCharsets.UTF_8));
    }

    /** Event {@code n} of the backlog as a relay publishes it: ~200-byte payload, Once's headers, signed. */
    private static ProducerRecord<String, byte[]> event(String topic, int n) {
        return event(topic, n, "o-" + (n % 1000));
    }

    private static ProducerRecord<String, byte[]> event(String topic, int n, String key) {
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, key,
                ("{\"n\":" + n + ",\"note\":\"" + "x".repeat(170) + "\"}").getBytes(StandardCharsets.UTF_8));
        for (String[] h : new String[][] {{WireFormat.EVENT_ID, dev.once.outbox.UuidV7.next().toString()},
                {WireFormat.TENANT_ID, "acme"}, {WireFormat.ACTOR_ID, "alice"},
                {WireFormat.AGGREGATE_TYPE, "order"}, {WireFormat.EVENT_TYPE, "OrderPlaced"},
                {WireFormat.EVENT_VERSION, "1"}, {WireFormat.CONTENT_TYPE, "application/json"},
                // the context of the request that appended it, as a traced service's events carry
                {WireFormat.TRACEPARENT, "00-" + hex(32) + "-" + hex(16) + "-01"}}) {
            record.headers().add(h[0], h[1].getBytes(StandardCharsets.UTF_8));
        }
        SIGNING.sign(record);
        return record;
    }

    private static String hex(int digits) {
        StringBuilder hex = new StringBuilder(digits);
        java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
        for (int i = 0; i < digits; i++) {
            hex.append(Character.forDigit(random.nextInt(16), 16));
        }
        return hex.toString();
    }

    /** The backlog: {@code events} events of keys {@code o-*}, then one event of each parked key {@code p-*}. */
    private static void produce(String bootstrap, String topic, int events, int parkedKeys) {
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(config, new StringSerializer(), new ByteArraySerializer())) {
            List<ProducerRecord<String, byte[]>> records = new ArrayList<>(10_000);
            for (int i = 0; i < events; i++) {
                records.add(event(topic, i));
                if (records.size() == 10_000 || i == events - 1) {
                    TestKafka.sendAll(producer, records); // in chunks: a 1,000,000-event backlog is not held in memory
                    records.clear();
                }
            }
            for (int k = 0; k < parkedKeys; k++) {
                records.add(event(topic, events + k, "p-" + k));
            }
            TestKafka.sendAll(producer, records);
        }
    }

    private static void execute(PostgresServer server, String sql) throws Exception {
        try (Connection c = DriverManager.getConnection(server.jdbcUrl(), server.username(), server.password());
             Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
