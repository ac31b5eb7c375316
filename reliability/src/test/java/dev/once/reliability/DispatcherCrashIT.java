package dev.once.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.idempotency.OnceMigrations;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.wire.WireFormat;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Scenario 12: a dispatcher with parking, alone in a JVM of its own ({@link DispatcherProcess}), killed with
 * {@code kill -9} while two keys are parked behind a failing dependency, and while the retrier is inside a retry of
 * one of them; then the dependency comes back and a new dispatcher starts. Each time nothing is lost, the TRANSACTIONAL
 * handler ran each event exactly once, every key kept its order, every parked row said why while it stood, and no key
 * stays parked.
 */
@ExtendWith(SummaryWatcher.class)
class DispatcherCrashIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    static final List<String> KEYS = List.of("d1", "d2", "d3", "d4");
    static final List<String> DOWN = List.of("d1", "d2");
    static final int PER_KEY = 5;

    static JdbcTemplate jdbc;

    /** Where the dispatcher is killed. */
    enum Moment { KEYS_PARKED, RETRY_RUNNING }

    @BeforeAll
    static void migrate() {
        OnceMigrations.migrate(db.dataSource());
        jdbc = new JdbcTemplate(db.dataSource());
        jdbc.execute("CREATE TABLE crash_effect (seq bigserial, handler text NOT NULL, record_key text NOT NULL, "
                + "n integer NOT NULL, event_id uuid NOT NULL)");
        jdbc.execute("CREATE TABLE crash_dependency (record_key text PRIMARY KEY, state text NOT NULL)");
    }

    @ParameterizedTest
    @EnumSource(Moment.class)
    void killed_while_keys_are_parked_it_loses_nothing_and_runs_nothing_twice(Moment moment) throws Exception {
        jdbc.update("DELETE FROM crash_effect");
        jdbc.update("DELETE FROM crash_dependency");
        DOWN.forEach(k -> jdbc.update("INSERT INTO crash_dependency VALUES (?, 'down')", k));
        String topic = "dcrash" + UUID.randomUUID().toString().substring(0, 8) + ".order";
        String group = "g-" + topic;
        TestKafka.createTopic(topic, 2);
        TestKafka.createTopic(topic + WireFormat.DEAD_LETTER_SUFFIX, 1);

        try (ChildJvm first = start(topic, group)) {
            first.await("STEP started");
            publish(topic);
            await("the healthy keys handled, the failing ones parked").atMost(Duration.ofSeconds(90)).until(() ->
                    effects("mailer") == (KEYS.size() - DOWN.size()) * PER_KEY && parked(group) == DOWN.size() * PER_KEY);
            assertThat(jdbc.queryForList("SELECT DISTINCT reason FROM once_parked_event WHERE group_id = ?",
                    String.class, group)).containsExactlyInAnyOrder("failing", "behind");
            assertThat(jdbc.queryForObject("SELECT count(*) FROM once_parked_event WHERE group_id = ? AND reason = "
                    + "'failing' AND (exception_class IS NULL OR message IS NULL OR attempts < 1)", Long.class, group))
                    .as("a failing head says why").isZero();
            if (moment == Moment.RETRY_RUNNING) {
                jdbc.update("UPDATE crash_dependency SET state = 'hang' WHERE record_key = 'd1'");
                first.await("STEP retrying d1");
            }
            first.kill();
        }
        assertThat(parked(group)).as("nothing parked was lost with the process").isEqualTo(DOWN.size() * PER_KEY);

        jdbc.update("DELETE FROM crash_dependency"); // the dependency is back
        try (ChildJvm second = start(topic, group)) {
            second.await("STEP started");
            await("every event handled by both handlers, nothing parked").atMost(Duration.ofSeconds(120)).until(() ->
                    effects("mailer") >= KEYS.size() * PER_KEY && effects("projection") >= KEYS.size() * PER_KEY
                            && parked(group) == 0);
        }
        assertThat(jdbc.queryForObject("SELECT count(*) FROM crash_effect WHERE handler = 'projection'", Long.class))
                .as("TRANSACTIONAL: exactly once").isEqualTo(KEYS.size() * PER_KEY);
        assertThat(jdbc.queryForObject("SELECT count(DISTINCT event_id) FROM crash_effect WHERE handler = 'mailer'",
                Long.class)).as("LEASED: every event").isEqualTo(KEYS.size() * PER_KEY);
        for (String key : KEYS) {
            assertThat(jdbc.queryForList("SELECT DISTINCT ON (n) n FROM (SELECT n, seq FROM crash_effect WHERE handler = "
                    + "'mailer' AND record_key = ? ORDER BY seq) e", Integer.class, key))
                    .as("key %s in order", key).containsExactly(1, 2, 3, 4, 5);
            assertThat(firstSeen(key)).as("key %s first runs in order", key).containsExactly(1, 2, 3, 4, 5);
        }
        long mailerDuplicates = effects("mailer") - KEYS.size() * PER_KEY;
        Summary.record(new Summary.Row("12 dispatcher killed: " + moment.name().toLowerCase().replace('_', ' '),
                KEYS.size() * PER_KEY, 1, 0, 0, true, "parked keys drained in order after the restart; "
                + "TRANSACTIONAL exactly once; LEASED re-ran " + mailerDuplicates + " whose lease lapsed in the kill"));
    }

    /** The order in which each event of {@code key} first took effect (the mailer's). */
    private static List<Integer> firstSeen(String key) {
        return jdbc.queryForList("SELECT n FROM (SELECT n, min(seq) AS first FROM crash_effect WHERE handler = 'mailer' "
                + "AND record_key = ? GROUP BY n) f ORDER BY first", Integer.class, key);
    }

    private static void publish(String topic) {
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        List<ProducerRecord<String, byte[]>> records = new ArrayList<>();
        for (int n = 1; n <= PER_KEY; n++) {
            for (String key : KEYS) {
                ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, key,
                        ("{\"n\":" + n + "}").getBytes(StandardCharsets.UTF_8));
                Map.of(WireFormat.EVENT_ID, UUID.randomUUID().toString(), WireFormat.TENANT_ID, "acme",
                        WireFormat.ACTOR_ID, "alice", WireFormat.EVENT_TYPE, "OrderPlaced", WireFormat.EVENT_VERSION,
                        "1", "test-key", key, "test-n", Integer.toString(n))
                        .forEach((name, value) -> record.headers().add(name, value.getBytes(StandardCharsets.UTF_8)));
                records.add(record);
            }
        }
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(config, new StringSerializer(),
                new ByteArraySerializer())) {
            TestKafka.sendAll(producer, records);
        }
    }

    private static long effects(String handler) {
        return jdbc.queryForObject("SELECT count(*) FROM crash_effect WHERE handler = ?", Long.class, handler);
    }

    private static long parked(String group) {
        return jdbc.queryForObject("SELECT count(*) FROM once_parked_event WHERE group_id = ? AND status <> 'abandoned'",
                Long.class, group);
    }

    private static ChildJvm start(String topic, String group) {
        return ChildJvm.start(DispatcherProcess.class, List.of("url=" + db.server().jdbcUrl(),
                "user=" + db.server().username(), "password=" + db.server().password(), "schema=" + db.schema(),
                "bootstrap=" + TestKafka.bootstrapServers(), "topic=" + topic, "group=" + group));
    }
}
