package dev.once.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.idempotency.OnceMigrations;
import dev.once.spi.SlotWatermarks;
import dev.once.test.TestDatabase;
import dev.once.wire.WireFormat;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The connector's replication slot on a real Kafka Connect cluster, set up as docs/SCALING.md says: a role of the
 * connector's own with only the grants SCALING lists (LOGIN REPLICATION, and SELECT on the outbox), the shipped
 * configuration, and the service's watermarks ({@code once.outbox.relay.mode=external}). The slot follows the WAL on
 * a quiet outbox; a service that appends before its connector exists loses nothing, also when the slot is dropped
 * mid-stream; a paused connector holds every row back, however old. Ending the connector's walsender takes
 * {@code pg_signal_backend} (or a superuser), as it takes an operator.
 */
class ConnectSlotIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(6);

    static EmbeddedConnectCluster connect;
    static JdbcTemplate jdbc;
    static ConnectorRole role;

    String prefix;
    String topic;
    ConnectorRelay relay;

    @BeforeAll
    static void start() {
        OnceMigrations.migrate(db.dataSource());
        jdbc = new JdbcTemplate(db.dataSource());
        role = ConnectorRole.granted(jdbc, db.schema());
        connect = new EmbeddedConnectCluster.Builder().name("once-connect-slot").numWorkers(1).numBrokers(1)
                .workerProps(new HashMap<>(Map.of("offset.flush.interval.ms", "500"))).build();
        connect.start();
    }

    @AfterAll
    static void stop() {
        if (connect != null) {
            connect.stop();
        }
    }

    @BeforeEach
    void connector() {
        jdbc.update("DELETE FROM outbox_event");
        prefix = "s" + UUID.randomUUID().toString().substring(0, 8);
        topic = prefix + ".order";
        connect.kafka().createTopic(topic, 3);
        relay = new ConnectorRelay(connect, db.dataSource(), db.server(), db.schema(), "once-" + prefix,
                "slot_" + prefix, prefix, SlotWatermarks.Options.ofDefaults().withInterval(Duration.ofMillis(200)),
                Map.of("database.user", role.user(), "database.password", role.password(),
                        "heartbeat.interval.ms", "1000", "retriable.restart.connector.wait.ms", "1000"));
    }

    @AfterEach
    void dropSlot() {
        relay.close();
        relay.dropSlot();
    }

    @Test
    void on_a_quiet_outbox_the_slot_follows_the_wal_within_a_few_heartbeats_with_the_documented_grants() {
        relay.start();
        append(10, "0 seconds");
        assertThat(read(10)).hasSize(10);
        String written = insertLsn();

        await("the slot past " + written).atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                "SELECT confirmed_flush_lsn > CAST(? AS pg_lsn) FROM pg_replication_slots WHERE slot_name = ?",
                Boolean.class, written, "slot_" + prefix));
        await().atMost(Duration.ofSeconds(30)).until(() -> rows() == 0);
        assertThat(relay.watermarks().status().problem(Duration.ofMinutes(1))).isNull();
        assertThat(connect.connectorStatus("once-" + prefix).tasks().get(0).state()).isEqualTo("RUNNING");
    }

    @Test
    void a_service_that_appends_before_its_connector_exists_loses_nothing_also_when_the_slot_is_dropped_mid_stream()
            throws Exception {
        append(1_000, "2 hours");
        for (int i = 0; i < 3; i++) {
            assertThat(relay.watermarks().round()).isEqualTo(new SlotWatermarks.Round(false, 0, 0));
        }
        assertThat(rows()).as("no slot yet: two hours old, kept").isEqualTo(1_000);

        relay.start();
        assertThat(read(1_000)).as("the connector's first snapshot").hasSize(1_000);
        await().atMost(Duration.ofSeconds(60)).until(() -> rows() == 0);

        CompletableFuture<Void> writers = CompletableFuture.runAsync(() -> {
            for (int i = 0; i < 30; i++) {
                append(100, "0 seconds");
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
            }
        });
        await().atMost(Duration.ofSeconds(60)).until(() -> records() >= 1_200);
        await("slot dropped").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20)).until(this::dropped);
        writers.get(60, TimeUnit.SECONDS);

        assertThat(read(4_000)).as("every event, once the connector made the slot anew").hasSize(4_000);
        await().atMost(Duration.ofSeconds(60)).until(() -> rows() == 0);
    }

    @Test
    void while_the_connector_is_paused_its_slot_confirms_nothing_and_no_row_leaves_however_old() {
        relay.start();
        append(10, "0 seconds");
        read(10);
        await().atMost(Duration.ofSeconds(30)).until(() -> rows() == 0);

        connect.pauseConnector("once-" + prefix);
        await().atMost(Duration.ofSeconds(30)).until(() -> "PAUSED".equals(
                connect.connectorStatus("once-" + prefix).connector().state()));
        append(100, "2 hours");
        long from = jdbc.queryForObject("SELECT COALESCE(max(id), 0) FROM once_relay_watermark", Long.class);
        await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM once_relay_watermark WHERE id > ?", Long.class, from) >= 3);
        assertThat(rows()).as("two hours old, retention zero, three watermark rounds: kept").isEqualTo(100);

        connect.resumeConnector("once-" + prefix);
        assertThat(read(110)).hasSize(110);
        await().atMost(Duration.ofSeconds(60)).until(() -> rows() == 0);
    }

    /** Ends the walsender that streams the connector's slot and drops it; false while one holds it again. */
    private boolean dropped() {
        jdbc.queryForList("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = ?"
                + " AND active_pid IS NOT NULL", "slot_" + prefix);
        try {
            jdbc.queryForList("SELECT pg_drop_replication_slot(?)", "slot_" + prefix);
            return true;
        } catch (DataAccessException e) {
            return false;
        }
    }

    private void append(int events, String ago) {
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type,
                                          event_version, payload, created_at)
                SELECT gen_random_uuid(), 'acme', 'alice', 'order', 'o-' || (n % 20), 'OrderPlaced', 1,
                       convert_to(jsonb_build_object('n', n)::text, 'UTF8'), now() - CAST(? AS interval)
                FROM generate_series(1, ?) AS n ORDER BY n
                """, ago, events);
    }

    private static long rows() {
        return jdbc.queryForObject("SELECT count(*) FROM outbox_event", Long.class);
    }

    private static String insertLsn() {
        return jdbc.queryForObject("SELECT pg_current_wal_insert_lsn()::text", String.class);
    }

    /** Records on the test's topic: its end offsets, every partition's. */
    private long records() {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, connect.kafka().bootstrapServers());
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            return consumer.endOffsets(consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList()).values().stream()
                    .mapToLong(Long::longValue).sum();
        }
    }

    /** The distinct events on the test's topic, once at least {@code distinct} have arrived. */
    private Set<String> read(int distinct) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, connect.kafka().bootstrapServers());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "it-" + UUID.randomUUID());
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        Set<String> ids = new HashSet<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            await().atMost(Duration.ofSeconds(120)).until(() -> {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(300))) {
                    ids.add(new String(r.headers().lastHeader(WireFormat.EVENT_ID).value(), StandardCharsets.UTF_8));
                }
                return ids.size() >= distinct && consumer.assignment().size() == 3
                        && consumer.endOffsets(consumer.assignment()).entrySet().stream()
                        .allMatch(e -> consumer.position(e.getKey()) >= e.getValue());
            });
        }
        return ids;
    }
}
