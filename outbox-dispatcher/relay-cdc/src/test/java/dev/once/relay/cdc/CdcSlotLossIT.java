package dev.once.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.autoconfigure.OnceExternalRelayAutoConfiguration;
import dev.once.autoconfigure.OnceRetentionAutoConfiguration;
import dev.once.autoconfigure.OnceSlotAutoConfiguration;
import dev.once.autoconfigure.OnceStoreAutoConfiguration;
import dev.once.idempotency.OnceMigrations;
import dev.once.relay.EventTransport;
import dev.once.relay.KafkaTransport;
import dev.once.relay.RelayListener;
import dev.once.relay.RelayOptions;
import dev.once.relay.TopicRouter;
import dev.once.relay.TransportUnavailableException;
import dev.once.retention.RetentionSweeper;
import dev.once.spi.SlotWatermarks;
import dev.once.test.TestKafka;
import dev.once.test.TestPostgres;
import dev.once.test.TestSigning;
import dev.once.wire.OutboxMessage;
import dev.once.wire.RecordSigning;
import dev.once.wire.SigningKeys;
import dev.once.wire.WireFormat;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * A slot that PostgreSQL invalidates, as {@code max_slot_wal_keep_size} does to a slot that falls behind while its
 * relay is down: the next leader notices ({@code wal_status = 'lost'}), drops it, and Debezium creates it anew with a
 * snapshot of every row not yet confirmed, instead of failing once a minute for ever on offsets the slot no longer
 * serves. A PostgreSQL of the test's own (zonky), since the setting and the checkpoint are under test. A new slot's
 * snapshot, during which PostgreSQL does not count the slot active, goes on for as long as it takes.
 */
class CdcSlotLossIT {

    static final RecordSigning SIGNING = RecordSigning.require(SigningKeys.of(Map.of(TestSigning.KEY_ID,
            TestSigning.SECRET), null));

    static TestPostgres.Embedded server;
    static HikariDataSource dataSource;
    static JdbcTemplate jdbc;

    @BeforeAll
    static void start() {
        server = TestPostgres.startEmbedded(Map.of("max_slot_wal_keep_size", "32MB", "wal_keep_size", "0",
                "max_wal_size", "64MB", "min_wal_size", "32MB"));
        dataSource = pool("public");
        OnceMigrations.migrate(dataSource);
        jdbc = new JdbcTemplate(dataSource);
    }

    /** A pool of four connections to the test's own PostgreSQL, as its superuser, on schema. */
    private static HikariDataSource pool(String schema) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(server.jdbcUrl("postgres"));
        config.setUsername("postgres");
        config.setSchema(schema);
        config.setMaximumPoolSize(4);
        return new HikariDataSource(config);
    }

    @AfterAll
    static void stop() {
        if (dataSource != null) {
            dataSource.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Test
    void a_slot_postgresql_invalidated_while_its_relay_was_down_is_made_anew_and_every_event_arrives() {
        String prefix = "lost" + UUID.randomUUID().toString().substring(0, 6);
        TestKafka.createTopic(prefix + ".order", 2);
        CdcSettings settings = CdcSettings.of(server.jdbcUrl("postgres"), "postgres", "", "public")
                .withSlot("lossy", "lossy").withTimings(Duration.ofMillis(500), Duration.ofMillis(200));
        try (KafkaTransport transport = new KafkaTransport(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                TestKafka.bootstrapServers()), TopicRouter.byAggregateType(prefix), Duration.ofSeconds(10), SIGNING)) {
            try (CdcRelay first = new CdcRelay("first", dataSource, settings, transport, RelayOptions.ofDefaults(),
                    RelayListener.NONE)) {
                first.start();
                append(1, 100);
                assertThat(distinct(prefix + ".order", 100)).hasSize(100);
                await().atMost(Duration.ofSeconds(60)).until(() -> pending() == 0);
            }
            append(101, 300); // while no relay runs; then the WAL grows past what the slot may hold
            jdbc.execute("CREATE TABLE filler (pad text)");
            await("slot lossy invalidated").atMost(Duration.ofSeconds(120)).until(() -> {
                jdbc.update("INSERT INTO filler SELECT repeat('x', 1000) FROM generate_series(1, 20000)");
                jdbc.queryForList("SELECT pg_switch_wal()");
                jdbc.execute("CHECKPOINT");
                return "lost".equals(jdbc.queryForObject("SELECT wal_status FROM pg_replication_slots"
                        + " WHERE slot_name = 'lossy'", String.class));
            });

            try (CdcRelay second = new CdcRelay("second", dataSource, settings, transport, RelayOptions.ofDefaults(),
                    RelayListener.NONE)) {
                second.start();
                assertThat(distinct(prefix + ".order", 300)).as("every event, the 200 by the new slot's snapshot")
                        .hasSize(300);
                await().atMost(Duration.ofSeconds(60)).until(() -> pending() == 0);
                assertThat(jdbc.queryForObject("SELECT wal_status FROM pg_replication_slots WHERE slot_name = 'lossy'",
                        String.class)).isEqualTo("reserved");
            }
        }
    }

    @Test
    void a_new_slots_snapshot_that_outlasts_the_slot_wait_goes_on_in_the_same_session() throws Exception {
        // PostgreSQL releases a slot it creates until streaming starts: while Debezium snapshots the rows not yet
        // published, the slot is not active, and the snapshot of a large backlog can take far longer than the wait
        jdbc.execute("CREATE SCHEMA snapshot");
        String prefix = "snap" + UUID.randomUUID().toString().substring(0, 6);
        TestKafka.createTopic(prefix + ".order", 2);
        Duration slotWait = Duration.ofSeconds(2);
        CountDownLatch kafkaSlow = new CountDownLatch(1);
        AtomicLong firstSend = new AtomicLong();
        Map<UUID, Integer> sent = new ConcurrentHashMap<>();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        try (HikariDataSource snapshot = pool("snapshot");
             KafkaTransport kafka = new KafkaTransport(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                     TestKafka.bootstrapServers()), TopicRouter.byAggregateType(prefix), Duration.ofSeconds(10), SIGNING)) {
            OnceMigrations.migrate(snapshot);
            // before the slot exists: the snapshot's rows, more than Debezium's queue holds (4 batches of 512), so that
            // the snapshot is still under way, not streaming, while the first batch waits for Kafka
            new JdbcTemplate(snapshot).update(APPEND, 1, EVENTS);
            EventTransport slowFirstBatch = new EventTransport() {
                @Override
                public Delivery send(List<OutboxMessage> messages) {
                    firstSend.compareAndSet(0, System.nanoTime());
                    try {
                        kafkaSlow.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new TransportUnavailableException("interrupted", e);
                    }
                    messages.forEach(m -> sent.merge(m.id(), 1, Integer::sum));
                    return kafka.send(messages);
                }

                @Override
                public void close() {
                }
            };
            CdcSettings settings = CdcSettings.of(server.jdbcUrl("postgres"), "postgres", "", "snapshot")
                    .withSlot("slow_snapshot", "slow_snapshot").withTimings(Duration.ofMillis(500), Duration.ofMillis(200));
            try (CdcRelay relay = new CdcRelay("snapshot", snapshot, settings, slowFirstBatch,
                    RelayOptions.ofDefaults().withBatchSize(512),
                    new RelayListener() {
                        @Override
                        public void failed(Throwable failure) {
                            failures.add(failure);
                        }
                    }, new SlotWatermarks(snapshot, "slow_snapshot", SlotWatermarks.Options.ofDefaults()), slotWait)) {
                relay.start();
                await("the snapshot's first batch").atMost(Duration.ofSeconds(60)).until(() -> firstSend.get() != 0);
                await("the snapshot outlasts the slot wait three times over").atMost(Duration.ofSeconds(60))
                        .until(() -> System.nanoTime() - firstSend.get() > 3 * slotWait.toNanos());
                assertThat(jdbc.queryForObject("SELECT active FROM pg_replication_slots WHERE slot_name = 'slow_snapshot'",
                        Boolean.class)).as("the slot while the snapshot runs").isFalse();
                assertThat(relay.isLeader()).isTrue();
                assertThat(failures).isEmpty();

                kafkaSlow.countDown();
                assertThat(distinct(prefix + ".order", EVENTS)).hasSize(EVENTS);
                await().atMost(Duration.ofSeconds(60)).until(() -> new JdbcTemplate(snapshot).queryForObject(
                        "SELECT count(*) FROM outbox_event WHERE published_at IS NULL", Long.class) == 0);
                assertThat(sent).as("each event handed to Kafka once: the snapshot was never begun again").hasSize(EVENTS)
                        .allSatisfy((id, times) -> assertThat(times).isEqualTo(1));
                assertThat(failures).isEmpty();
            }
        } finally {
            kafkaSlow.countDown();
        }
    }

    /**
     * With Kafka Connect relaying the outbox, the service never touches the connector's slot: once PostgreSQL
     * invalidated it, no row leaves the outbox, however old, until the connector streams a slot again, and health and
     * the slot's state say why. Deleting by age, or because a slot of that name exists, fails here.
     */
    @Test
    void with_an_external_relay_a_slot_postgresql_invalidated_deletes_nothing_and_health_says_why() {
        jdbc.execute("CREATE SCHEMA external");
        String slot = "connector_lost";
        try (HikariDataSource external = pool("external")) {
            OnceMigrations.migrate(external);
            JdbcTemplate here = new JdbcTemplate(external);
            here.queryForList("SELECT pg_create_logical_replication_slot(?, 'test_decoding')", slot);
            here.update("""
                    INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type,
                                              event_version, payload, created_at)
                    SELECT gen_random_uuid(), 'acme', 'alice', 'order', 'o-' || n, 'OrderPlaced', 1,
                           convert_to('{}', 'UTF8'), now() - interval '2 hours'
                    FROM generate_series(1, 5) AS n
                    """);
            here.execute("CREATE TABLE filler (pad text)");
            await("slot " + slot + " invalidated").atMost(Duration.ofSeconds(120)).until(() -> {
                here.update("INSERT INTO filler SELECT repeat('x', 1000) FROM generate_series(1, 20000)");
                here.queryForList("SELECT pg_switch_wal()");
                here.execute("CHECKPOINT");
                return "lost".equals(here.queryForObject("SELECT wal_status FROM pg_replication_slots"
                        + " WHERE slot_name = ?", String.class, slot));
            });

            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(OnceStoreAutoConfiguration.class,
                            OnceRetentionAutoConfiguration.class, OnceExternalRelayAutoConfiguration.class,
                            OnceSlotAutoConfiguration.class))
                    .withBean(DataSource.class, () -> new DelegatingDataSource(external))
                    .withPropertyValues("once.outbox.relay.mode=external", "once.outbox.relay.external.slot-name=" + slot,
                            "once.outbox.relay.retention=0s", "once.idempotency.migrate=false")
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        SlotWatermarks watermarks = context.getBean(SlotWatermarks.class);
                        for (int i = 0; i < 3; i++) {
                            assertThat(watermarks.round().swept()).isZero();
                        }
                        assertThat(context.getBean(RetentionSweeper.class).sweep()).containsEntry("outbox_event", 0L);
                        assertThat(here.queryForObject("SELECT count(*) FROM outbox_event", Long.class))
                                .as("two hours old, retention zero, a slot of that name exists: kept").isEqualTo(5);
                        var health = context.getBean("onceOutboxSlotHealthIndicator", HealthIndicator.class).health();
                        assertThat(health.getStatus()).isEqualTo(Status.DOWN);
                        assertThat(health.getDetails()).containsEntry("state", "LOST").containsEntry("wal-status", "lost");
                        assertThat(String.valueOf(health.getDetails().get("reason")))
                                .contains("replication slot " + slot + " was invalidated by PostgreSQL");
                    });
        } finally {
            jdbc.queryForList("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
                    + " WHERE slot_name = ? AND NOT active", slot);
        }
    }

    private static final int EVENTS = 5_000;

    private static final String APPEND = """
            INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type,
                                      event_version, payload)
            SELECT gen_random_uuid(), 'acme', 'alice', 'order', 'o-' || (n % 10), 'OrderPlaced', 1,
                   convert_to(jsonb_build_object('n', n)::text, 'UTF8')
            FROM generate_series(?, ?) AS n ORDER BY n
            """;

    private static void append(int from, int to) {
        jdbc.update(APPEND, from, to);
    }

    private static long pending() {
        return jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE published_at IS NULL AND parked_at IS NULL",
                Long.class);
    }

    private static Set<String> distinct(String topic, int expected) {
        return TestKafka.distinctHeaders(TestKafka.bootstrapServers(), topic, WireFormat.EVENT_ID, expected);
    }
}
