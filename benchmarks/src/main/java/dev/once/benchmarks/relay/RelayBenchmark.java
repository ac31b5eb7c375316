package dev.once.benchmarks.relay;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.idempotency.OnceMigrations;
import dev.once.relay.EventTransport;
import dev.once.relay.KafkaTransport;
import dev.once.wire.OutboxMessage;
import dev.once.relay.OutboxRelay;
import dev.once.relay.PollingRelay;
import dev.once.relay.RelayListener;
import dev.once.relay.RelayOptions;
import dev.once.relay.TopicRouter;
import dev.once.relay.cdc.CdcRelay;
import dev.once.relay.cdc.CdcSettings;
import dev.once.relay.cdc.internal.EngineProperties;
import dev.once.relay.cdc.internal.JdbcOffsetBackingStore;
import dev.once.test.Paced;
import dev.once.test.PostgresServer;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.test.TestPostgres;
import dev.once.wire.RecordSigning;
import dev.once.wire.SigningKeys;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import io.debezium.pipeline.source.spi.EventMetadataProvider;
import io.debezium.pipeline.spi.OffsetContext;
import io.debezium.spi.schema.DataCollectionId;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Relay throughput and latency, with Kafka's own {@code ProducerPerformance} as the raw baseline, same broker, same
 * record size and acks, in the same run:
 * <ul>
 *   <li>latency, first: rows commit one per transaction at a steady rate, two seconds of warm-up and then the
 *       measured window; the relay reports commit-to-acknowledgement latency for each, and p50/p99 are printed;</li>
 *   <li>drain: 100,000 rows of ~200-byte payload commit in one transaction; the clock runs from that commit until
 *       the last one is acknowledged, and the rate counting the insert too is printed beside it, then how long after
 *       the outbox was empty (the polling relay deletes in the batch that publishes; with CDC, rows leave once the
 *       slot confirmed them).</li>
 *   <li>burst: {@code --writers} threads (16) commit one row per transaction as fast as they can, {@code --burst}
 *       rows in all (20,000, then 100,000); commit-to-acknowledgement p50/p99 during the burst and the tail (last
 *       commit to last acknowledgement) are printed, and the writers' tx/s against the same writers with no relay,
 *       measured first in the same run.</li>
 * </ul>
 * Bursts also print the longest wait without an acknowledgement and, for CDC, the CPU and memory Debezium's
 * decoding thread spent per event and, on Linux, the share of the burst it was runnable but on no core;
 * {@code --timeline} prints each burst every 200 ms. With {@code --checkpoint}, a
 * {@code CHECKPOINT} starts when half of each burst is committed (the role needs {@code pg_checkpoint}), as one
 * started by WAL volume would: PostgreSQL keeps writes waiting while it writes out its dirty pages.
 * Before them, the CDC relay runs once with Kafka taken out (a transport that acknowledges at once): the floor of
 * Debezium's decoding and the relay's bookkeeping; and Debezium's engine runs alone, with a handler that counts
 * ({@code --no-floor} skips both). Both floors can also be listed in {@code --relays} ({@code cdc-floor},
 * {@code engine-floor}), to alternate them with the relay in one run; {@code engine-kafka-floor} is Debezium's engine
 * with a handler that publishes each row's key and payload with the relay's producer settings and waits for the
 * batch's acknowledgements before its offsets move (the relay's floor with Kafka in), and
 * {@code engine-kafka-floor-pipelined} the same with the next batch sent before the last one's acknowledgements are
 * in (its offsets move once they are: the floor of a relay that pipelines its batches); {@code engine-floor-nostats} is
 * Debezium's engine alone with its statistics of its lag off too ({@code statistics.metrics.enabled}, on by default).
 * Each relay
 * runs once per entry of {@code --signing off,on,on,off} (records unsigned, or signed with an HMAC key as
 * {@code once.outbox.signing.keys} would; the ABBA order lets warm-up and drift weigh on both alike), and a summary
 * compares the means of the signed drain and latency with the unsigned ones of the same run. With {@code --heap}, the
 * drain prints the heap in use after a full GC every 10 s. With {@code --warm-up N}, the first relay of
 * {@code --relays} runs N times before everything else (unsigned, printed, not recorded): the JIT has then compiled the
 * relay's and Debezium's code, as in a relay that has been running for a while, and what is measured after it is the
 * warm relay.
 * With {@code --commit-delay N}, every commit in the run waits N microseconds before PostgreSQL flushes the WAL
 * ({@code commit_delay}, with {@code commit_siblings} 0; set with ALTER SYSTEM, which takes a superuser, and reset at
 * the end): the writers and the relays' own writes are commit-bound, as on a disk whose fsync is that slow.
 * Options: {@code --rows 100000 --aggregates 1000 --rate 2000 --seconds 10 --relays polling,cdc --workers 2 --batch 2000
 * --signing off,on,on,off --burst 20000,100000 --writers 16 --warm-up 0 --commit-delay 0 --heap --timeline
 * --checkpoint --no-floor}.
 */
public final class RelayBenchmark {

    private RelayBenchmark() {
    }

    /** The command line: see the class comment. */
    record Options(int rows, int rate, int seconds, List<String> relays, int workers, int batch, int aggregates,
                   List<String> signings, List<Integer> bursts, int writers, int warmUp, boolean heap, boolean floor,
                   boolean timeline, boolean checkpoint, int commitDelay) {

        static Options parse(String[] args) {
            List<String> flags = List.of("--heap", "--no-floor", "--timeline", "--checkpoint");
            List<String> given = java.util.Arrays.asList(args);
            Map<String, String> values = new java.util.HashMap<>();
            String[] rest = given.stream().filter(a -> !flags.contains(a)).toArray(String[]::new);
            for (int i = 0; i < rest.length; i++) {
                if (i + 1 == rest.length || !List.of("--rows", "--rate", "--seconds", "--relays", "--workers", "--batch",
                        "--aggregates", "--signing", "--burst", "--writers", "--warm-up", "--commit-delay")
                        .contains(rest[i])) {
                    throw new IllegalArgumentException("unknown option, or an option without its value: " + rest[i]);
                }
                values.put(rest[i], rest[++i]);
            }
            String burst = values.getOrDefault("--burst", "20000,100000");
            return new Options(Integer.parseInt(values.getOrDefault("--rows", "100000")),
                    Integer.parseInt(values.getOrDefault("--rate", "2000")),
                    Integer.parseInt(values.getOrDefault("--seconds", "10")),
                    List.of(values.getOrDefault("--relays", "polling,cdc").split(",")),
                    Integer.parseInt(values.getOrDefault("--workers", Integer.toString(RelayOptions.WORKERS))),
                    Integer.parseInt(values.getOrDefault("--batch", "2000")),
                    Integer.parseInt(values.getOrDefault("--aggregates", "1000")),
                    List.of(values.getOrDefault("--signing", "off,on,on,off").split(",")),
                    burst.isEmpty() || burst.equals("none") ? List.of()
                            : java.util.Arrays.stream(burst.split(",")).map(Integer::valueOf).toList(),
                    Integer.parseInt(values.getOrDefault("--writers", "16")),
                    Integer.parseInt(values.getOrDefault("--warm-up", "0")),
                    given.contains("--heap"), !given.contains("--no-floor"), given.contains("--timeline"),
                    given.contains("--checkpoint"), Integer.parseInt(values.getOrDefault("--commit-delay", "0")));
        }
    }

    public static void main(String[] args) throws Exception {
        Options o = Options.parse(args);
        PostgresServer server = TestPostgres.server();
        if (o.commitDelay() > 0) {
            commitBound(server, o.commitDelay());
            Runtime.getRuntime().addShutdownHook(new Thread(() -> commitBound(server, 0)));
        }
        String bootstrap = TestKafka.bootstrapServers();
        System.out.printf(Locale.ROOT, "relay benchmark on %s, Kafka %s%n", server, bootstrap);
        String baselineTopic = "bench-raw-" + Long.toHexString(System.nanoTime());
        TestKafka.createTopic(baselineTopic, 4);
        System.out.println("\nraw baseline: org.apache.kafka.tools.ProducerPerformance, " + o.rows() + " records of 200 bytes, acks=all");
        org.apache.kafka.tools.ProducerPerformance.main(new String[] {"--topic", baselineTopic, "--num-records",
                Integer.toString(o.rows()), "--record-size", "200", "--throughput", "-1", "--producer-props",
                "bootstrap.servers=" + bootstrap, "acks=all", "enable.idempotence=true", "linger.ms=5"});
        Map<Integer, Double> bare = new java.util.LinkedHashMap<>();
        for (int burst : o.bursts()) {
            bare.put(burst, bareWriters(server, burst, o.writers()));
            System.out.printf(Locale.ROOT, "raw baseline: %d writers, no relay: %d rows at %.0f tx/s%n", o.writers(), burst,
                    bare.get(burst));
        }
        for (int i = 1; i <= o.warmUp(); i++) {
            // the JIT compiles the relay's and Debezium's code here, as it has in a relay that has run for a while
            System.out.printf(Locale.ROOT, "%nwarm-up %d of %d, not recorded:%n", i, o.warmUp());
            if (o.relays().get(0).startsWith("engine-")) {
                engineFloor(server, o, bare, o.relays().get(0));
            } else {
                run(server, bootstrap, o.relays().get(0), RecordSigning.off(), o, bare);
            }
        }
        Map<String, List<Result>> results = new java.util.LinkedHashMap<>();
        if (o.floor()) {
            // the CDC relay's floor: Debezium's decoding and the relay's bookkeeping, with Kafka taken out
            results.computeIfAbsent("cdc-floor (no Kafka)", k -> new ArrayList<>()).add(run(server, bootstrap, "cdc-floor",
                    RecordSigning.off(), o, bare));
        }
        if (o.floor() && o.relays().contains("cdc")) {
            engineFloor(server, o, bare, "engine-floor");
        }
        for (String relay : o.relays()) {
            for (String signing : o.signings()) {
                if (relay.startsWith("engine-")) {
                    engineFloor(server, o, bare, relay); // no Kafka, so no signing either
                    continue;
                }
                RecordSigning recordSigning = signing.equals("on")
                        ? RecordSigning.require(SigningKeys.of(Map.of("bench-1", "a benchmark key of thirty-two bytes or more"), null))
                        : RecordSigning.off();
                Result result = run(server, bootstrap, relay, recordSigning, o, bare);
                results.computeIfAbsent(relay + " signing " + signing, k -> new ArrayList<>()).add(result);
            }
        }
        System.out.printf(Locale.ROOT, "%n%-22s %5s %12s %9s %9s  (means)%n", "variant", "runs", "drain ev/s", "p50 ms", "p99 ms");
        results.forEach((name, r) -> {
            Result mean = Result.mean(r);
            System.out.printf(Locale.ROOT, "%-22s %5d %12.0f %9.1f %9.1f%n", name, r.size(), mean.drain(), mean.p50(), mean.p99());
        });
        double check = topicLimitCheckNanos(o.rows());
        results.forEach((name, r) -> System.out.printf(Locale.ROOT, "%s: the topic-limit check takes %.0f ns of its "
                + "%.0f ns per event at its drain (%.1f %%)%n", name, check, 1e9 / Result.mean(r).drain(),
                100 * check * Result.mean(r).drain() / 1e9));
        for (String relay : o.relays()) {
            Result off = results.containsKey(relay + " signing off") ? Result.mean(results.get(relay + " signing off")) : null;
            Result on = results.containsKey(relay + " signing on") ? Result.mean(results.get(relay + " signing on")) : null;
            if (off != null && on != null) {
                System.out.printf(Locale.ROOT, "%s relay, signing on / off: drain %.2fx, p99 %.2fx%n", relay,
                        on.drain() / off.drain(), on.p99() / off.p99());
            }
        }
    }

    /**
     * What the relay's check of each record against its topic's {@code max.message.bytes} costs per event: the
     * upper-bound estimate of a record's batch size ({@code OutboxCodec.batchSizeUpperBound}, the computation the check
     * adds; the producer makes the same one for {@code max.request.size}), over {@code rows} signed records shaped like the benchmark's, the median of 9
     * rounds after 3 not counted. It cannot be switched off in the relay, so it is measured alone in the same run.
     */
    static double topicLimitCheckNanos(int rows) {
        RecordSigning signing = RecordSigning.require(SigningKeys.of(Map.of("bench-1",
                "a benchmark key of thirty-two bytes or more"), null));
        List<org.apache.kafka.clients.producer.ProducerRecord<String, byte[]>> records = new ArrayList<>(rows);
        for (int n = 1; n <= rows; n++) {
            byte[] payload = ("{\"n\": " + n + ", \"note\": \"" + "x".repeat(170) + "\"}")
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8);
            records.add(dev.once.wire.OutboxCodec.write(new dev.once.wire.OutboxMessage(java.util.UUID.randomUUID(),
                    "acme", "alice", "order", "o-" + (n % 1000), "OrderPlaced", 1, payload, "application/json",
                    Map.of(), java.time.Instant.now()), "bench.order", signing));
        }
        double[] rounds = new double[12];
        long sink = 0;
        for (int round = 0; round < rounds.length; round++) {
            long start = System.nanoTime();
            for (var record : records) {
                sink += dev.once.wire.OutboxCodec.batchSizeUpperBound(record);
            }
            rounds[round] = (System.nanoTime() - start) / (double) records.size();
        }
        double[] counted = java.util.Arrays.copyOfRange(rounds, 3, rounds.length);
        java.util.Arrays.sort(counted);
        System.out.printf(Locale.ROOT, "%ntopic-limit check alone: %.0f ns per record (median of %d rounds over %d "
                + "records; %d bytes estimated)%n", counted[counted.length / 2], counted.length, rows, sink);
        return counted[counted.length / 2];
    }

    /**
     * Makes every commit wait {@code micros} before the WAL flush ({@code commit_delay}, {@code commit_siblings} 0), or
     * resets both with 0: a commit-bound server, as on a disk whose fsync takes that long.
     */
    private static void commitBound(PostgresServer server, int micros) {
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(server.jdbcUrl(), server.username(),
                server.password()); java.sql.Statement s = c.createStatement()) {
            s.execute(micros > 0 ? "ALTER SYSTEM SET commit_delay = " + micros : "ALTER SYSTEM RESET commit_delay");
            s.execute(micros > 0 ? "ALTER SYSTEM SET commit_siblings = 0" : "ALTER SYSTEM RESET commit_siblings");
            s.execute("SELECT pg_reload_conf()");
            System.out.printf(Locale.ROOT, "commit_delay %s%n", micros > 0 ? micros + " us before every WAL flush: "
                    + "commit-bound" : "reset");
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException("--commit-delay needs a superuser of " + server + ": " + e.getMessage(), e);
        }
    }

    /** A relay's figures in one variant: drain rate from commit, and commit-to-acknowledgement latency at the rate. */
    record Result(double drain, double p50, double p99) {

        static Result mean(List<Result> runs) {
            return new Result(runs.stream().mapToDouble(Result::drain).average().orElse(Double.NaN),
                    runs.stream().mapToDouble(Result::p50).average().orElse(Double.NaN),
                    runs.stream().mapToDouble(Result::p99).average().orElse(Double.NaN));
        }
    }

    private static Result run(PostgresServer server, String bootstrap, String kind, RecordSigning signing, Options o,
                              Map<Integer, Double> bursts) throws Exception {
        String schema = "bench_relay_" + Long.toHexString(System.nanoTime());
        execute(server, "CREATE SCHEMA " + schema);
        String slot = schema.toLowerCase(Locale.ROOT);
        try (HikariDataSource ds = TestDatabase.newDataSource(schema, 8, null)) {
            OnceMigrations.migrate(ds);
            String prefix = "b" + Long.toHexString(System.nanoTime());
            TestKafka.createTopic(prefix + ".order", 4);
            ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
            AtomicLong published = new AtomicLong();
            RelayListener listener = new RelayListener() {
                @Override
                public void published(int count) {
                    published.addAndGet(count);
                }

                @Override
                public void latency(Duration latency) {
                    latencies.add(latency.toNanos());
                }
            };
            EventTransport transport = kind.equals("cdc-floor") ? new AcknowledgingTransport()
                    : new KafkaTransport(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
                            TopicRouter.byAggregateType(prefix), Duration.ofSeconds(30), signing);
            RelayOptions options = RelayOptions.ofDefaults().withBatchSize(o.batch()).withWorkers(o.workers());
            OutboxRelay relay = kind.startsWith("cdc")
                    ? new CdcRelay("bench", ds, CdcSettings.of(server.jdbcUrl(), server.username(), server.password(), schema)
                            .withSlot(slot, slot), transport, options, listener)
                    : new PollingRelay("bench", ds, transport, options, listener);
            JdbcTemplate jdbc = new JdbcTemplate(ds);
            try (relay; transport) {
                relay.start();
                // Latency first, on a settled system (after a 100,000-row burst, vacuum and the slot's decoding of the
                // deletes would still be running): two seconds of warm-up at the rate, not recorded, then the window.
                awaitDrained(jdbc, published, steady(jdbc, o.rate(), 2));
                latencies.clear();
                published.set(0);
                awaitDrained(jdbc, published, steady(jdbc, o.rate(), o.seconds()));
                List<Long> sorted = new ArrayList<>(latencies);
                sorted.sort(Long::compare);
                System.out.printf(Locale.ROOT, "%n%s relay (signing %s): commit->ack at %d events/s over %d s: p50 %.1f ms, "
                        + "p99 %.1f ms (%d samples)%n", kind, signing.mode() == RecordSigning.Mode.OFF ? "off" : "on",
                        o.rate(), o.seconds(), percentile(sorted, 0.50), percentile(sorted, 0.99), sorted.size());

                published.set(0);
                long insertStart = System.nanoTime();
                int rows = o.rows();
                jdbc.update(INSERT_BACKLOG, o.aggregates(), rows);
                long committed = System.nanoTime();
                if (o.heap()) {
                    sampleHeapUntil(published, rows, kind);
                }
                awaitPublished(published, rows);
                long drained = System.nanoTime();
                awaitDrained(jdbc, published, rows);
                double drain = rows / ((drained - committed) / 1e9);
                System.out.printf(Locale.ROOT, "%s relay: drained %d rows at %.0f events/s from their commit "
                        + "(%.0f events/s counting the %.0f ms insert too); the outbox empty %.0f ms after the last "
                        + "acknowledgement%n", kind, rows, drain, rows / ((drained - insertStart) / 1e9),
                        (committed - insertStart) / 1e6, (System.nanoTime() - drained) / 1e6);
                bursts(kind + " relay", "commit->ack", schema, bursts, o, published, latencies, jdbc,
                        kind.startsWith("cdc") ? slot : null);
                return new Result(drain, percentile(sorted, 0.50), percentile(sorted, 0.99));
            }
        } finally {
            if (kind.startsWith("cdc")) {
                dropSlot(server, slot);
            }
            execute(server, "DROP SCHEMA " + schema + " CASCADE");
        }
    }

    private static Properties engineProperties(CdcSettings settings, RelayOptions options, String variant) {
        Properties properties = EngineProperties.of(settings, options);
        if (variant.endsWith("-nostats")) {
            properties.setProperty("statistics.metrics.enabled", "false"); // Debezium's lag quantiles, on by default
        }
        return properties;
    }

    /**
     * The floor of the CDC relay: Debezium's engine alone, with the relay's configuration ({@link EngineProperties})
     * and a handler that only counts each outbox insert and its commit-to-handler latency (no message, no Kafka, no
     * bookkeeping; rows stay in the table). The relay creates the publication and the slot first and steps aside.
     * Prints the drain of {@code rows} committed at once, the bursts, and what Debezium's per-event JMX summary
     * costs on an idle thread. {@code variant}: {@code engine-floor} with the relay's configuration,
     * {@code engine-floor-nostats} with Debezium's statistics of its lag (their quantiles) off as well,
     * {@code engine-kafka-floor} publishing to Kafka as a sink would.
     */
    private static void engineFloor(PostgresServer server, Options o, Map<Integer, Double> bursts, String variant)
            throws Exception {
        String schema = "bench_engine_" + Long.toHexString(System.nanoTime());
        execute(server, "CREATE SCHEMA " + schema);
        String slot = schema.toLowerCase(Locale.ROOT);
        CdcSettings settings = CdcSettings.of(server.jdbcUrl(), server.username(), server.password(), schema)
                .withSlot(slot, slot);
        RelayOptions options = RelayOptions.ofDefaults().withBatchSize(o.batch());
        ExecutorService engineThread = Executors.newSingleThreadExecutor();
        try (HikariDataSource ds = TestDatabase.newDataSource(schema, 8, null)) {
            OnceMigrations.migrate(ds);
            JdbcTemplate jdbc = new JdbcTemplate(ds);
            AtomicLong relayed = new AtomicLong();
            try (CdcRelay relay = new CdcRelay("bench", ds, settings, new AcknowledgingTransport(), options,
                    new RelayListener() {
                        @Override
                        public void published(int count) {
                            relayed.addAndGet(count);
                        }
                    })) {
                relay.start();
                jdbc.update(INSERT_BACKLOG, o.aggregates(), 1); // streamed: the engine has started, and may be stopped
                while (relayed.get() < 1) {
                    LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
                }
            }
            ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
            AtomicLong counted = new AtomicLong();
            JdbcOffsetBackingStore.register(slot, ds);
            boolean kafka = variant.startsWith(ENGINE_KAFKA_FLOOR);
            boolean pipelined = variant.endsWith(PIPELINED);
            java.util.Queue<SentBatch> sentBefore = new java.util.ArrayDeque<>(); // the engine's thread only
            String topic = "bench-engine-" + Long.toHexString(System.nanoTime());
            if (kafka) {
                TestKafka.createTopic(topic, 4);
            }
            KafkaProducer<String, byte[]> producer = kafka ? floorProducer() : null;
            DebeziumEngine<RecordChangeEvent<SourceRecord>> engine = DebeziumEngine
                    .create(ChangeEventFormat.of(io.debezium.embedded.Connect.class))
                    .using(engineProperties(settings, options, variant))
                    .notifying((records, committer) -> {
                        List<Long> committedAt = new ArrayList<>(records.size());
                        List<Struct> rows = new ArrayList<>(records.size());
                        for (RecordChangeEvent<SourceRecord> event : records) {
                            if (event.record().value() instanceof Struct value && value.schema().field("source") != null
                                    && "outbox_event".equals(value.getStruct("source").getString("table"))) {
                                committedAt.add(value.getStruct("source").getInt64("ts_ms"));
                                rows.add(value.getStruct("after"));
                            }
                        }
                        Runnable acknowledged = () -> { // when the batch's last acknowledgement is in
                            long now = System.currentTimeMillis();
                            committedAt.forEach(ts -> latencies.add(Duration.ofMillis(now - ts).toNanos()));
                            counted.addAndGet(committedAt.size());
                        };
                        AtomicInteger waiting = new AtomicInteger(rows.size());
                        List<Future<RecordMetadata>> acks = new ArrayList<>(rows.size());
                        for (Struct after : producer == null ? List.<Struct>of() : rows) { // as a sink sends them
                            acks.add(producer.send(new ProducerRecord<>(topic, after.getString("aggregate_id"),
                                    bytes(after.get("payload"))), (metadata, e) -> {
                                        if (pipelined && waiting.decrementAndGet() == 0) {
                                            acknowledged.run();
                                        }
                                    }));
                        }
                        SentBatch sent = new SentBatch(records, acks);
                        if (pipelined) { // this batch's offsets move once its acknowledgements are in, after the next is sent
                            SentBatch before = sentBefore.poll();
                            sentBefore.add(sent);
                            if (before != null) {
                                before.markWhenAcknowledged(committer, () -> { });
                            }
                        } else { // every acknowledgement before the offsets move
                            sent.markWhenAcknowledged(committer, acknowledged);
                        }
                    })
                    .build();
            try (producer; engine) { // the engine stops first: no batch sends after the producer closed
                engineThread.submit(engine);
                while (jdbc.queryForObject("SELECT count(*) FROM pg_replication_slots WHERE slot_name = ? AND active",
                        Long.class, slot) == 0) {
                    LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
                }
                System.out.printf(Locale.ROOT, "%n%s: Debezium's engine alone (relay configuration%s, a handler that "
                        + "%s), slot %s%n", variant, variant.endsWith("-nostats") ? " and its statistics off" : "",
                        kafka ? "sends each row's key and payload to Kafka with the relay's producer settings and waits "
                                + (pipelined ? "for the previous batch's acknowledgements after it sent the next"
                                : "for the batch's acknowledgements") : "counts", slot);
                jdbc.update(INSERT_BACKLOG, o.aggregates(), o.rows());
                long committed = System.nanoTime();
                while (counted.get() < o.rows()) {
                    LockSupport.parkNanos(Duration.ofMillis(2).toNanos());
                }
                System.out.printf(Locale.ROOT, "%s: decoded %d rows at %.0f events/s from their commit%n", variant, o.rows(),
                        o.rows() / ((System.nanoTime() - committed) / 1e9));
                bursts(variant, kafka ? "commit->ack" : "commit->handler", schema, bursts, o, counted, latencies, jdbc,
                        slot);
            }
        } finally {
            engineThread.shutdownNow();
            dropSlot(server, slot);
            execute(server, "DROP SCHEMA " + schema + " CASCADE");
        }
        System.out.printf(Locale.ROOT, "engine-floor: Debezium's JMX summary of one event (CommonEventMeter.onEvent, a "
                + "new ObjectMapper per call), on an idle thread: %s%n", summaryCost());
    }

    /** The variant of {@link #engineFloor} whose handler publishes to Kafka: the floor of the relay with Kafka in. */
    static final String ENGINE_KAFKA_FLOOR = "engine-kafka-floor";

    /**
     * The suffix of {@link #ENGINE_KAFKA_FLOOR}'s variant that sends a batch before the previous one's acknowledgements
     * are in: the previous batch's offsets move once they are, so a crash still sends again what Kafka did not
     * acknowledge. Its latency counts from the commit to the batch's last acknowledgement, as the other's does.
     */
    static final String PIPELINED = "-pipelined";

    /** A batch the floor sent: its offsets move once every acknowledgement is in. */
    private record SentBatch(List<RecordChangeEvent<SourceRecord>> records, List<Future<RecordMetadata>> acks) {

        /** {@code acknowledged} runs once they are in, before the offsets move (and are stored, as the relay's). */
        void markWhenAcknowledged(DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer,
                                  Runnable acknowledged) throws InterruptedException {
            for (Future<RecordMetadata> ack : acks) {
                try {
                    ack.get();
                } catch (java.util.concurrent.ExecutionException e) {
                    throw new IllegalStateException("Kafka refused a record of the floor", e);
                }
            }
            acknowledged.run();
            for (RecordChangeEvent<SourceRecord> event : records) {
                committer.markProcessed(event);
            }
            committer.markBatchFinished();
        }
    }

    /** The relay's producer settings ({@link KafkaTransport#defaults}, {@link KafkaTransport#REQUIRED}), on raw bytes. */
    private static KafkaProducer<String, byte[]> floorProducer() {
        Map<String, Object> config = KafkaTransport.defaults(Duration.ofSeconds(30));
        config.putAll(KafkaTransport.REQUIRED);
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        return new KafkaProducer<>(config, new StringSerializer(), new ByteArraySerializer());
    }

    private static byte[] bytes(Object column) {
        if (column instanceof java.nio.ByteBuffer buffer) {
            byte[] copy = new byte[buffer.remaining()];
            buffer.duplicate().get(copy);
            return copy;
        }
        return (byte[]) column;
    }

    /**
     * What Debezium's streaming metrics do for every event ({@code CommonEventMeter.onEvent} keeps a summary string of
     * the last event: the source position and the key struct printed as JSON), timed and its allocation counted on
     * this thread.
     */
    private static String summaryCost() {
        Schema keySchema = SchemaBuilder.struct()
                .name("once.bench.outbox_event.Key").field("id", Schema.STRING_SCHEMA).build();
        Struct key = new Struct(keySchema).put("id", UUID.randomUUID().toString());
        EventMetadataProvider postgres = new EventMetadataProvider() {
            @Override
            public Instant getEventTimestamp(DataCollectionId source,
                                                       OffsetContext offset, Object k, Struct v) {
                return null;
            }

            @Override
            public Map<String, String> getEventSourcePosition(DataCollectionId source,
                                                              OffsetContext offset, Object k,
                                                              Struct v) {
                return new java.util.HashMap<>(Map.of("lsn", "2147483648", "xmin", "1234")); // as PostgreSQL's provider
            }

            @Override
            public String getTransactionId(DataCollectionId source,
                                           OffsetContext offset, Object k, Struct v) {
                return null;
            }
        };
        long sink = 0;
        int warmup = 20_000;
        int measured = 50_000;
        long start = 0;
        long allocated = 0;
        long self = Thread.currentThread().getId();
        for (int i = 0; i < warmup + measured; i++) {
            if (i == warmup) {
                start = System.nanoTime();
                allocated = THREADS.getThreadAllocatedBytes(self);
            }
            sink += postgres.toSummaryString(null, null, key, null).length();
        }
        double micros = (System.nanoTime() - start) / 1e3 / measured;
        double kib = (THREADS.getThreadAllocatedBytes(self) - allocated) / 1024.0 / measured;
        return sink == 0 ? "" : String.format(Locale.ROOT, "%.1f us and %.1f KiB allocated", micros, kib);
    }

    private static final String INSERT_BACKLOG = """
            INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type,
                                      event_version, payload)
            SELECT gen_random_uuid(), 'acme', 'alice', 'order', 'o-' || (n % ?), 'OrderPlaced', 1,
                   convert_to(jsonb_build_object('n', n, 'note', repeat('x', 170))::text, 'UTF8')
            FROM generate_series(1, ?) AS n ORDER BY n
            """;

    /**
     * Meets each burst ({@code rows} → the writers' rate without a relay) and prints its figures: {@code counted} is
     * what the relay (or engine) reports done, {@code latencies} its commit-to-{@code measured} latency per row.
     */
    private static void bursts(String label, String measured, String schema, Map<Integer, Double> bursts, Options o,
                               AtomicLong counted, ConcurrentLinkedQueue<Long> latencies, JdbcTemplate jdbc, String slot)
            throws Exception {
        for (Map.Entry<Integer, Double> burst : bursts.entrySet()) {
            latencies.clear();
            counted.set(0);
            java.time.LocalTime began = java.time.LocalTime.now(); // to find the burst in a recording
            Burst b = burst(schema, burst.getKey(), o, counted, jdbc, slot);
            List<Long> during = new ArrayList<>(latencies);
            during.sort(Long::compare);
            System.out.printf(Locale.ROOT, "%s, burst of %d rows from %d writers (began %s): %.0f tx/s (%.2fx of no "
                    + "relay), %s p50 %.1f ms, p99 %.1f ms, tail after the last commit %.0f ms%n", label, burst.getKey(),
                    o.writers(), began, b.txPerSecond(), b.txPerSecond() / burst.getValue(), measured, percentile(during, 0.50),
                    percentile(during, 0.99), b.tailMillis());
            System.out.println("  " + b.describe());
        }
    }

    /** Acknowledges every message at once, as if Kafka took no time: what is left of a relay's latency is its own. */
    private static final class AcknowledgingTransport implements EventTransport {

        @Override
        public Delivery send(List<OutboxMessage> messages) {
            return new Delivery(messages.stream().map(OutboxMessage::id).toList(), Map.of());
        }

        @Override
        public void close() {
        }
    }

    /**
     * A burst's figures: the writers' rate, the time from the last commit until the relay had acknowledged all, the
     * longest time the relay acknowledged nothing while rows were waiting, and the CPU Debezium's decoding thread
     * spent per event, its share of one core and the share of the burst it was runnable but on no core (NaN without
     * a CDC engine; the last also NaN where Linux's scheduler statistics are missing).
     */
    record Burst(double txPerSecond, double tailMillis, double longestWaitMillis, double decodingMicrosPerEvent,
                 double decodingShare, double decodingKibPerEvent, double decodingRunnableShare) {

        String describe() {
            return String.format(Locale.ROOT, "longest wait without an acknowledgement %.0f ms%s", longestWaitMillis,
                    Double.isNaN(decodingMicrosPerEvent) ? "" : String.format(Locale.ROOT,
                            "; Debezium's decoding thread: %.1f us CPU and %.0f KiB allocated per event, %.0f %% of a "
                                    + "core%s", decodingMicrosPerEvent, decodingKibPerEvent, decodingShare * 100,
                            Double.isNaN(decodingRunnableShare) ? "" : String.format(Locale.ROOT,
                                    ", and %.0f %% of the burst runnable but waiting for a core",
                                    decodingRunnableShare * 100)));
        }
    }

    /**
     * {@code --writers} threads, each on a connection of its own, commit one row per transaction as fast as they can
     * until {@code rows} are committed; then waits until the relay reported them all published. With
     * {@code --timeline}, prints every 200 ms what is committed, acknowledged, not yet sent by the walsender (needs
     * {@code pg_read_all_stats}) and queued in Debezium.
     */
    private static Burst burst(String schema, int rows, Options o, AtomicLong published, JdbcTemplate probe, String slot)
            throws Exception {
        try (HikariDataSource pool = TestDatabase.newDataSource(schema, o.writers(), null)) {
            AtomicLong committed = new AtomicLong();
            Thread decoder = decodingThread();
            long cpuBefore = decoder == null ? 0 : THREADS.getThreadCpuTime(decoder.getId());
            long allocatedBefore = decoder == null ? 0 : THREADS.getThreadAllocatedBytes(decoder.getId());
            Path schedstat = decoder == null ? null : schedstat(cpuBefore);
            long queuedBefore = runQueueNanos(schedstat);
            long[] longestWait = new long[1];
            Thread watch = new Thread(() -> longestWait[0] = watch(rows, committed, published, o.timeline() ? probe : null,
                    slot), "burst-watch");
            watch.setDaemon(true);
            watch.start();
            Thread checkpointer = null;
            if (o.checkpoint()) {
                checkpointer = new Thread(() -> {
                    while (committed.get() < rows / 2) {
                        LockSupport.parkNanos(Duration.ofMillis(1).toNanos());
                    }
                    long begin = System.nanoTime();
                    probe.execute("CHECKPOINT");
                    System.out.printf(Locale.ROOT, "  CHECKPOINT half-way through the burst took %.0f ms%n",
                            (System.nanoTime() - begin) / 1e6);
                }, "burst-checkpoint");
                checkpointer.setDaemon(true);
                checkpointer.start();
            }
            long[] window = write(new JdbcTemplate(pool), rows, o.writers(), committed);
            while (published.get() < rows) {
                LockSupport.parkNanos(Duration.ofMillis(1).toNanos());
            }
            long acknowledged = System.nanoTime();
            watch.join();
            if (checkpointer != null) {
                checkpointer.join();
            }
            double cpu = decoder == null ? Double.NaN : THREADS.getThreadCpuTime(decoder.getId()) - cpuBefore;
            double allocated = decoder == null ? Double.NaN
                    : THREADS.getThreadAllocatedBytes(decoder.getId()) - allocatedBefore;
            long queuedAfter = runQueueNanos(schedstat);
            double queued = queuedBefore < 0 || queuedAfter < 0 ? Double.NaN : queuedAfter - queuedBefore;
            return new Burst(rows / ((window[1] - window[0]) / 1e9), (acknowledged - window[1]) / 1e6,
                    longestWait[0] / 1e6, cpu / 1e3 / rows, cpu / (acknowledged - window[0]), allocated / 1024 / rows,
                    queued / (acknowledged - window[0]));
        }
    }

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** Debezium's one decoding thread (the PostgreSQL connector's streaming coordinator), if an engine runs. */
    private static Thread decodingThread() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().contains("change-event-source-coordinator")).findFirst().orElse(null);
    }

    /**
     * Linux's scheduler statistics of the decoding thread ({@code /proc/self/task/<tid>/schedstat}: time on a core,
     * time runnable on a run queue, timeslices), or null where there are none. Java does not tell a thread's native
     * id, so the task is the one whose time on a core matches the thread's CPU time, {@code cpuNanos}, best.
     */
    private static Path schedstat(long cpuNanos) {
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            return tasks.map(t -> t.resolve("schedstat")).filter(Files::isReadable)
                    .min(Comparator.comparingLong(s -> Math.abs(schedField(s, 0) - cpuNanos))).orElse(null);
        } catch (IOException | UncheckedIOException e) {
            return null;
        }
    }

    /** The nanoseconds the task spent runnable but waiting for a core, or -1 where Linux does not say. */
    private static long runQueueNanos(Path schedstat) {
        return schedstat == null ? -1 : schedField(schedstat, 1);
    }

    private static long schedField(Path schedstat, int field) {
        try {
            return Long.parseLong(Files.readString(schedstat).trim().split(" ")[field]);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * Until {@code rows} are acknowledged: the longest time, in nanoseconds, the relay acknowledged nothing while
     * committed rows were waiting; with a {@code probe}, prints the timeline every 200 ms.
     */
    private static long watch(int rows, AtomicLong committed, AtomicLong published, JdbcTemplate probe, String slot) {
        long start = System.nanoTime();
        long nextLine = start;
        long last = published.get();
        long since = start;
        long longest = 0;
        while (published.get() < rows) {
            long now = System.nanoTime();
            long p = published.get();
            if (p != last || committed.get() <= p) {
                longest = Math.max(longest, p != last ? now - since : 0);
                last = p;
                since = now;
            }
            if (probe != null && now >= nextLine) {
                nextLine = now + 200_000_000L;
                System.out.printf(Locale.ROOT, "  t=%5d ms committed %6d acknowledged %6d%s%s%n", (now - start) / 1_000_000,
                        committed.get(), p, slot == null ? "" : ", " + probe.queryForObject(UNSENT_WAL, String.class, slot),
                        debeziumQueue());
            }
            LockSupport.parkNanos(1_000_000L);
        }
        return longest;
    }

    private static final String UNSENT_WAL = """
            SELECT coalesce((SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), r.sent_lsn)::bigint || ' bytes of WAL unsent'
                             FROM pg_replication_slots s JOIN pg_stat_replication r ON r.pid = s.active_pid
                             WHERE s.slot_name = ?), 'unsent WAL unknown')
            """;

    /** Debezium's queue and lag, from its streaming MBean. */
    private static String debeziumQueue() {
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            StringBuilder out = new StringBuilder();
            for (ObjectName n : server.queryNames(
                    new ObjectName("debezium.postgres:context=streaming,*"), null)) {
                out.append(", Debezium queue free ").append(server.getAttribute(n, "QueueRemainingCapacity"))
                        .append(", behind the source ").append(server.getAttribute(n, "MilliSecondsBehindSource"))
                        .append(" ms");
            }
            return out.toString();
        } catch (JMException e) {
            return ", " + e;
        }
    }

    /** The writers' rate with no relay running: the baseline of a burst, on a schema of its own. */
    private static double bareWriters(PostgresServer server, int rows, int writers) throws Exception {
        String schema = "bench_bare_" + Long.toHexString(System.nanoTime());
        execute(server, "CREATE SCHEMA " + schema);
        try (HikariDataSource pool = TestDatabase.newDataSource(schema, writers, null)) {
            OnceMigrations.migrate(pool);
            long[] window = write(new JdbcTemplate(pool), rows, writers, new AtomicLong());
            return rows / ((window[1] - window[0]) / 1e9);
        } finally {
            execute(server, "DROP SCHEMA " + schema + " CASCADE");
        }
    }

    /** Commits {@code rows} one-row transactions from {@code writers} threads; returns the first start and last commit. */
    private static long[] write(JdbcTemplate jdbc, int rows, int writers, AtomicLong committed) throws InterruptedException {
        AtomicLong next = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        long start = System.nanoTime();
        for (int w = 0; w < writers; w++) {
            Thread t = new Thread(() -> {
                long n;
                while ((n = next.getAndIncrement()) < rows) {
                    jdbc.update("INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type,"
                            + " event_version, payload) VALUES (gen_random_uuid(), 'acme', 'alice', 'order', ?, 'OrderPlaced', 1,"
                            + " convert_to(jsonb_build_object('n', ?, 'note', repeat('x', 170))::text, 'UTF8'))", "w-" + (n % 1000), n);
                    committed.incrementAndGet();
                }
            });
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        return new long[] {start, System.nanoTime()};
    }

    /** Prints the heap in use after a full GC every 10 s until the relay reported {@code rows} published. */
    private static void sampleHeapUntil(AtomicLong published, long rows, String kind) {
        long begin = System.nanoTime();
        long next = begin;
        while (published.get() < rows) {
            if (System.nanoTime() >= next) {
                System.gc();
                Runtime rt = Runtime.getRuntime();
                System.out.printf(Locale.ROOT, "  %s t=%3ds published=%8d heap after GC=%4d MiB%n", kind,
                        (System.nanoTime() - begin) / 1_000_000_000L, published.get(), (rt.totalMemory() - rt.freeMemory()) >> 20);
                next = System.nanoTime() + 10_000_000_000L;
            }
            LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
        }
    }

    /**
     * Waits until the relay reported {@code rows} published, then until the table confirms none is pending. Counting
     * with the listener first keeps the probe off PostgreSQL: a {@code count(*)} of the backlog every few
     * milliseconds would take CPU from the relay it is timing.
     */
    private static void awaitPublished(AtomicLong published, long rows) {
        while (published.get() < rows) {
            LockSupport.parkNanos(Duration.ofMillis(2).toNanos());
        }
    }

    private static void awaitDrained(JdbcTemplate jdbc, AtomicLong published, long rows) {
        awaitPublished(published, rows);
        while (pending(jdbc) > 0) {
            LockSupport.parkNanos(Duration.ofMillis(2).toNanos());
        }
    }

    /**
     * Commits one row per transaction at {@code rate} per second for {@code seconds}, from two paced threads;
     * returns how many rows were committed.
     */
    private static long steady(JdbcTemplate jdbc, int rate, int seconds) throws InterruptedException {
        return Paced.run(2, rate, Duration.ofSeconds(seconds), n -> jdbc.update("INSERT INTO outbox_event (id, tenant_id,"
                + " actor_id, aggregate_type, aggregate_id, event_type, event_version, payload) VALUES (gen_random_uuid(),"
                + " 'acme', 'alice', 'order', ?, 'OrderPlaced', 1,"
                + " convert_to(jsonb_build_object('n', ?, 'note', repeat('x', 170))::text, 'UTF8'))", "s-" + (n % 100), n));
    }

    private static long pending(JdbcTemplate jdbc) {
        Long n = jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE published_at IS NULL AND parked_at IS NULL",
                Long.class);
        return n == null ? 0 : n;
    }

    private static double percentile(List<Long> sorted, double p) {
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        return sorted.get((int) Math.min(sorted.size() - 1, Math.round(p * (sorted.size() - 1)))) / 1e6;
    }

    /** Drops a relay's slot (once its walsender has let go) and publication. */
    private static void dropSlot(PostgresServer server, String slot) throws Exception {
        try (Connection c = DriverManager.getConnection(server.jdbcUrl(), server.username(), server.password());
             Statement s = c.createStatement()) {
            for (int i = 0; i < 100; i++) {
                try {
                    s.execute("SELECT pg_drop_replication_slot('" + slot + "') FROM pg_replication_slots"
                            + " WHERE slot_name = '" + slot + "'");
                    break;
                } catch (java.sql.SQLException stillActive) {
                    LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
                }
            }
            s.execute("DROP PUBLICATION IF EXISTS " + slot);
        }
    }

    private static void execute(PostgresServer server, String sql) throws Exception {
        try (Connection c = DriverManager.getConnection(server.jdbcUrl(), server.username(), server.password());
             Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
