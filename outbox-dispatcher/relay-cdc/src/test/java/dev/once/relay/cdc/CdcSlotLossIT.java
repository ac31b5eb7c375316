package dev.once.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.idempotency.OnceMigrations;
import dev.once.relay.KafkaTransport;
import dev.once.relay.RelayListener;
import dev.once.relay.RelayOptions;
import dev.once.relay.TopicRouter;
import dev.once.test.TestKafka;
import dev.once.test.TestPostgres;
import dev.once.test.TestSigning;
import dev.once.wire.RecordSigning;
import dev.once.wire.SigningKeys;
import dev.once.wire.WireFormat;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * A slot that PostgreSQL invalidates, as {@code max_slot_wal_keep_size} does to a slot that falls behind while its
 * relay is down: the next leader notices ({@code wal_status = 'lost'}), drops it, and Debezium creates it anew with a
 * snapshot of every row not yet confirmed, instead of failing once a minute for ever on offsets the slot no longer
 * serves. A PostgreSQL of the test's own (zonky), since the setting and the checkpoint are under test.
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
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(server.jdbcUrl("postgres"));
        config.setUsername("postgres");
        config.setMaximumPoolSize(4);
        dataSource = new HikariDataSource(config);
        OnceMigrations.migrate(dataSource);
        jdbc = new JdbcTemplate(dataSource);
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

    private static void append(int from, int to) {
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type,
                                          event_version, payload)
                SELECT gen_random_uuid(), 'acme', 'alice', 'order', 'o-' || (n % 10), 'OrderPlaced', 1,
                       convert_to(jsonb_build_object('n', n)::text, 'UTF8')
                FROM generate_series(?, ?) AS n ORDER BY n
                """, from, to);
    }

    private static long pending() {
        return jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE published_at IS NULL AND parked_at IS NULL",
                Long.class);
    }

    private static Set<String> distinct(String topic, int expected) {
        return TestKafka.distinctHeaders(TestKafka.bootstrapServers(), topic, WireFormat.EVENT_ID, expected);
    }
}
