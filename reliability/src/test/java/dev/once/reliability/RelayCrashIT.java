package dev.once.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.idempotency.OnceMigrations;
import dev.once.test.ReplicationCleanup;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.wire.WireFormat;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Scenario 11: the CDC relay, alone in a JVM of its own ({@link RelayProcess}), killed with {@code kill -9} at each
 * step of a batch, then started again: when the batch was handed to Kafka, when Kafka had acknowledged it, when a
 * record Kafka refused had been parked (its offsets not yet stored), when the offsets had been stored, and while the
 * watermarks were deleting what the slot had confirmed. The steps in the JVM are stopped at from inside it; those in
 * PostgreSQL by a trigger that holds the statement. Each time, every event reaches Kafka, the refused one and the one
 * behind it stay parked, and no row stays pending.
 */
@ExtendWith(SummaryWatcher.class)
class RelayCrashIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(6);

    static final int EVENTS = 500;
    static JdbcTemplate jdbc;

    /** Where in a batch the relay is killed. */
    enum Step { RECEIVED, PUBLISHED, PARKED, OFFSETS_SAVED, SWEEPING }

    @BeforeAll
    static void migrate() {
        OnceMigrations.migrate(db.dataSource());
        jdbc = new JdbcTemplate(db.dataSource());
    }

    @ParameterizedTest
    @EnumSource(Step.class)
    void killed_at_a_step_of_a_batch_the_relay_loses_nothing_and_leaves_no_row_pending(Step step) throws Exception {
        jdbc.update("DELETE FROM outbox_event");
        String prefix = "crash" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 20, 1 << 24));
        String slot = (prefix + "_" + db.schema()).toLowerCase();
        TestKafka.createTopic(prefix + ".order", 3);
        TestKafka.createTopic(prefix + ".big", 1);
        try {
            try (ChildJvm first = start(prefix, slot, step == Step.RECEIVED || step == Step.PUBLISHED
                    ? step.name().toLowerCase() : "")) {
                first.await("STEP leading");
                try (Holding held = Holding.at(step)) {
                    append(EVENTS);
                    killPoint(first, step, prefix);
                    first.kill();
                }
            }
            try (ChildJvm second = start(prefix, slot, "")) {
                second.await("STEP leading");
                Set<String> published = distinct(prefix + ".order", EVENTS);
                assertThat(published).hasSize(EVENTS);
                assertThat(distinct(prefix + ".big", 1)).as("b-2, whose aggregate nothing holds back").hasSize(1);
                await().atMost(Duration.ofSeconds(60)).until(() -> pending() == 0);
                assertThat(jdbc.queryForList("SELECT aggregate_id FROM outbox_event WHERE parked_at IS NOT NULL"
                        + " ORDER BY seq", String.class)).as("the refused event and the one behind it")
                        .containsExactly("b-1", "b-1");
                Summary.record(new Summary.Row("11 CDC relay killed at a batch step: " + step.name().toLowerCase()
                        .replace('_', ' '), EVENTS + 3, 1, 0, 0, true, "every event published, refused ones parked, "
                        + "no row left pending"));
            }
        } finally {
            ReplicationCleanup.drop(db.dataSource(), slot, slot);
        }
    }

    /** Waits until the first relay is where {@code step} says, so that the kill lands there. */
    private static void killPoint(ChildJvm first, Step step, String prefix) {
        switch (step) {
            case RECEIVED, PUBLISHED -> first.await("STEP " + step.name().toLowerCase());
            case PARKED -> await("a refused event parked").atMost(Duration.ofSeconds(60)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM outbox_event WHERE parked_at IS NOT NULL", Long.class) > 0);
            case OFFSETS_SAVED -> {
                distinct(prefix + ".order", EVENTS);
                String saved = jdbc.queryForObject("SELECT max(updated_at)::text FROM once_relay_offset", String.class);
                await("offsets saved after the events were published").atMost(Duration.ofSeconds(60)).until(() ->
                        jdbc.queryForObject("SELECT max(updated_at) > CAST(? AS timestamptz) FROM once_relay_offset",
                                Boolean.class, saved));
            }
            case SWEEPING -> await("the sweep's delete held").atMost(Duration.ofSeconds(60)).until(() ->
                    jdbc.queryForObject("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
                            Long.class) > 0);
        }
    }

    /** {@code events} small events over 20 orders, and in one transaction an oversized one of b-1, one behind it, and b-2. */
    private static void append(int events) {
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type,
                                          event_version, payload)
                SELECT gen_random_uuid(), 'acme', 'alice', 'order', 'o-' || (n % 20), 'OrderPlaced', 1,
                       convert_to(jsonb_build_object('n', n)::text, 'UTF8')
                FROM generate_series(1, ?) AS n ORDER BY n
                """, events);
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type,
                                          event_version, payload)
                VALUES (gen_random_uuid(), 'acme', 'alice', 'big', 'b-1', 'Blob', 1, convert_to(repeat('x', 200000), 'UTF8')),
                       (gen_random_uuid(), 'acme', 'alice', 'big', 'b-1', 'Blob', 1, convert_to('"behind"', 'UTF8')),
                       (gen_random_uuid(), 'acme', 'alice', 'big', 'b-2', 'Blob', 1, convert_to('"free"', 'UTF8'))
                """);
    }

    private static long pending() {
        return jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE published_at IS NULL AND parked_at IS NULL",
                Long.class);
    }

    private static Set<String> distinct(String topic, int expected) {
        return TestKafka.distinctHeaders(TestKafka.bootstrapServers(), topic, WireFormat.EVENT_ID, expected);
    }

    /**
     * What holds the first relay at a step inside PostgreSQL until closed: its offsets' saves (parked, offsets not yet
     * stored), or the watermarks' delete (the slot confirmed, the rows not yet deleted). A trigger waits for an
     * advisory lock this test holds.
     */
    private record Holding(Connection holder, String table) implements AutoCloseable {

        static Holding at(Step step) throws SQLException {
            String table = step == Step.PARKED ? "once_relay_offset" : step == Step.SWEEPING ? "outbox_event" : null;
            if (table == null) {
                return new Holding(null, null);
            }
            long lock = ThreadLocalRandom.current().nextLong(1, Integer.MAX_VALUE);
            Connection holder = db.dataSource().getConnection();
            holder.setAutoCommit(false);
            holder.createStatement().execute("SELECT pg_advisory_xact_lock(" + lock + ")");
            jdbc.execute("CREATE FUNCTION hold_for_test() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                    + " PERFORM pg_advisory_xact_lock_shared(" + lock + "); IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;"
                    + " RETURN NEW; END $$");
            jdbc.execute("CREATE TRIGGER hold_for_test BEFORE " + (step == Step.PARKED ? "INSERT OR UPDATE" : "DELETE")
                    + " ON " + table + " FOR EACH ROW EXECUTE FUNCTION hold_for_test()");
            return new Holding(holder, table);
        }

        @Override
        public void close() throws SQLException {
            if (holder != null) {
                try (holder) {
                    holder.rollback();
                } finally {
                    jdbc.execute("DROP TRIGGER IF EXISTS hold_for_test ON " + table
                            + "; DROP FUNCTION IF EXISTS hold_for_test()");
                }
            }
        }
    }

    /** A {@link RelayProcess} JVM, stopped for good at {@code block} (a step name, or empty). */
    private static ChildJvm start(String prefix, String slot, String block) {
        return ChildJvm.start(RelayProcess.class, List.of("url=" + db.server().jdbcUrl(),
                "user=" + db.server().username(), "password=" + db.server().password(), "schema=" + db.schema(),
                "slot=" + slot, "bootstrap=" + TestKafka.bootstrapServers(), "prefix=" + prefix, "block=" + block,
                "max-request-size=100000"));
    }
}
