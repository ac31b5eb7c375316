package dev.once.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.autoconfigure.OnceSlotAutoConfiguration;
import dev.once.autoconfigure.OnceStoreAutoConfiguration;
import dev.once.idempotency.OnceMigrations;
import dev.once.outbox.OutboxOperations;
import dev.once.test.TestDatabase;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.PGProperty;
import org.postgresql.replication.LogSequenceNumber;
import org.postgresql.replication.PGReplicationStream;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * The rule by which rows leave the outbox when a relay reads the WAL, against a real PostgreSQL and a replication slot
 * that the test streams and confirms itself (PostgreSQL's {@code test_decoding}, read with the JDBC driver's
 * replication API), so that what the slot has confirmed is exactly what each test says. Each test fails on an unsafe
 * rule: deleting rows by age, deleting them because a slot exists, or trusting the position of a slot created anew.
 */
class SlotWatermarksIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().sessionTimeZone("America/St_Johns");

    static JdbcTemplate jdbc;

    String slot;
    Consumer consumer;

    @BeforeAll
    static void migrate() {
        OnceMigrations.migrate(db.dataSource());
        jdbc = new JdbcTemplate(db.dataSource());
    }

    @BeforeEach
    void slotName() {
        jdbc.update("DELETE FROM outbox_event");
        slot = "wm_" + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 20, 1 << 24));
    }

    @AfterEach
    void dropSlot() throws SQLException {
        if (consumer != null) {
            consumer.close();
        }
        jdbc.queryForList("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = ?"
                + " AND NOT active", slot);
    }

    @Test
    void rows_appended_before_the_slot_exists_stay_however_old_until_a_slot_streams_and_confirms_them() throws Exception {
        jdbc.update(APPEND_AGED, "2 hours", 3);
        SlotWatermarks watermarks = watermarks(Duration.ZERO);

        assertThat(watermarks.round()).as("no slot: no watermark, nothing swept").isEqualTo(new SlotWatermarks.Round(false, 0, 0));
        assertThat(watermarks.status().state()).isEqualTo(OutboxOperations.Slot.State.MISSING);
        assertThat(watermarks.status().problem(Duration.ofMinutes(1))).contains("does not exist");
        assertThat(rows()).as("two hours old, retention zero: kept, since nothing relayed them").isEqualTo(3);

        consumer = Consumer.create(slot);
        assertThat(watermarks.round().sampled()).isTrue();
        assertThat(rows()).as("a slot exists and streams, and has confirmed nothing yet").isEqualTo(3);
        consumer.confirm(currentLsn());
        assertThat(watermarks.round()).isEqualTo(new SlotWatermarks.Round(true, 1, 3));
        assertThat(rows()).isZero();
    }

    @Test
    void rows_leave_only_once_the_slot_confirmed_a_position_past_their_commit() throws Exception {
        consumer = Consumer.create(slot);
        SlotWatermarks watermarks = watermarks(Duration.ZERO);
        LogSequenceNumber beforeCommit = currentLsn();
        jdbc.update(APPEND_AGED, "0 seconds", 3);
        watermarks.round();

        consumer.confirm(beforeCommit);
        assertThat(watermarks.round().confirmed()).as("the slot is behind the rows' commit").isZero();
        assertThat(rows()).isEqualTo(3);

        consumer.confirm(currentLsn());
        SlotWatermarks.Round round = watermarks.round();
        assertThat(round.confirmed()).isPositive();
        assertThat(round.swept()).isEqualTo(3);
        assertThat(watermarks.status().state()).isEqualTo(OutboxOperations.Slot.State.STREAMING);
        assertThat(watermarks.status().lag()).isNotNull();
        assertThat(watermarks.status().problem(Duration.ofMinutes(1))).isNull();
    }

    @Test
    void the_rows_of_a_transaction_still_open_when_a_watermark_was_taken_wait_for_a_later_one_and_only_they_wait()
            throws Exception {
        consumer = Consumer.create(slot);
        SlotWatermarks watermarks = watermarks(Duration.ZERO);
        jdbc.update(APPEND_AGED, "0 seconds", 1); // committed before the open transaction began
        try (Connection open = db.dataSource().getConnection()) {
            open.setAutoCommit(false);
            open.createStatement().execute(APPEND_ONE);
            jdbc.update(APPEND_AGED, "0 seconds", 2); // committed while it is open, with later transaction ids
            watermarks.round();
            open.commit();
        }
        consumer.confirm(currentLsn());

        assertThat(watermarks.round().swept()).as("the three committed before the watermark").isEqualTo(3);
        assertThat(rows()).isOne();
        consumer.confirm(currentLsn());
        assertThat(watermarks.round().swept()).as("the open one's, once a watermark after its commit is confirmed")
                .isOne();
    }

    @Test
    void a_slot_created_anew_confirms_nothing_it_did_not_stream() throws Exception {
        consumer = Consumer.create(slot);
        SlotWatermarks watermarks = watermarks(Duration.ZERO);
        jdbc.update(APPEND_AGED, "0 seconds", 3);
        assertThat(watermarks.round().sampled()).isTrue(); // taken while the first slot streamed

        // the slot is lost, as in a failover, and created anew past everything written so far
        consumer.close();
        jdbc.queryForList("SELECT pg_drop_replication_slot(?)", slot);
        consumer = Consumer.create(slot);
        assertThat(jdbc.queryForObject("SELECT confirmed_flush_lsn >= (SELECT max(lsn) FROM once_relay_watermark"
                + " WHERE slot_name = ?) FROM pg_replication_slots WHERE slot_name = ?", Boolean.class, slot, slot))
                .as("the new slot's position lies past the watermark").isTrue();

        SlotWatermarks.Round round = watermarks.round();
        assertThat(round.confirmed()).as("taken under another session: never confirmed").isZero();
        assertThat(rows()).isEqualTo(3);
        consumer.confirm(currentLsn());
        assertThat(watermarks.round().swept()).as("once the new slot confirmed a watermark of its own").isEqualTo(3);
    }

    @Test
    void with_a_retention_period_confirmed_rows_are_marked_published_and_parked_rows_stay_pending_for_an_operator()
            throws Exception {
        consumer = Consumer.create(slot);
        SlotWatermarks watermarks = watermarks(Duration.ofDays(7));
        jdbc.update(APPEND_AGED, "0 seconds", 3);
        jdbc.update("UPDATE outbox_event SET parked_at = now(), park_reason = 'refused' WHERE id = (SELECT id FROM"
                + " outbox_event ORDER BY seq LIMIT 1)");
        watermarks.round();
        consumer.confirm(currentLsn());

        assertThat(watermarks.round().swept()).isEqualTo(2);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE published_at IS NOT NULL", Long.class))
                .isEqualTo(2);
        assertThat(OutboxOperations.create(db.dataSource()).pending()).isZero();
        assertThat(OutboxOperations.create(db.dataSource()).parkedCount()).isOne();
    }

    @Test
    void instances_racing_over_one_slot_each_delete_a_row_once() throws Exception {
        consumer = Consumer.create(slot);
        jdbc.update(APPEND_AGED, "0 seconds", 5_000);
        watermarks(Duration.ZERO).round();
        consumer.confirm(currentLsn());

        List<CompletableFuture<Long>> instances = List.of(1, 2, 3).stream().map(i -> CompletableFuture.supplyAsync(
                () -> watermarks(Duration.ZERO).round().swept())).toList();
        long swept = 0;
        for (CompletableFuture<Long> instance : instances) {
            swept += instance.get(60, TimeUnit.SECONDS);
        }
        swept += watermarks(Duration.ZERO).round().swept(); // one that lost the race for the round's lock may have missed the confirmation
        assertThat(swept).isEqualTo(5_000);
        assertThat(rows()).isZero();
    }

    @Test
    void a_slot_that_stopped_confirming_while_the_wal_grew_is_reported_with_its_lag() throws Exception {
        consumer = Consumer.create(slot);
        SlotWatermarks watermarks = watermarks(Duration.ZERO);
        watermarks.round();
        jdbc.update("UPDATE once_relay_watermark SET taken_at = taken_at - interval '10 minutes' WHERE slot_name = ?",
                slot); // as if taken ten minutes ago, and never confirmed since
        jdbc.update(APPEND_AGED, "0 seconds", 1);

        OutboxOperations.Slot status = watermarks.status();
        assertThat(status.lag()).isGreaterThan(Duration.ofMinutes(9));
        assertThat(status.lagBytes()).isPositive();
        assertThat(status.problem(Duration.ofMinutes(2))).contains("has confirmed nothing for", "stuck or paused");

        consumer.confirm(currentLsn());
        watermarks.round();
        assertThat(watermarks.status().problem(Duration.ofMinutes(2))).isNull();
    }

    @Test
    void a_slot_that_stopped_confirming_turns_health_down_with_its_lag_in_the_metrics_and_up_again_once_it_moves()
            throws Exception {
        consumer = Consumer.create(slot);
        SlotWatermarks watermarks = watermarks(Duration.ZERO);
        DataSource shared = new DelegatingDataSource(db.dataSource());
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(OnceStoreAutoConfiguration.class, OnceSlotAutoConfiguration.class))
                .withBean(DataSource.class, () -> shared).withBean(SlotWatermarks.class, () -> watermarks)
                .run(context -> {
                    HealthIndicator health = context.getBean("onceOutboxSlotHealthIndicator", HealthIndicator.class);
                    MeterRegistry meters = new SimpleMeterRegistry();
                    context.getBean("onceSlotMetrics", MeterBinder.class).bindTo(meters);

                    watermarks.round();
                    consumer.confirm(currentLsn());
                    watermarks.round();
                    assertThat(health.health().getStatus()).as("streamed and confirming").isEqualTo(Status.UP);
                    assertThat(health.health().getDetails()).containsEntry("slot", slot).containsEntry("state", "STREAMING")
                            .containsKeys("lag-bytes", "lag", "wal-status");

                    jdbc.update("UPDATE once_relay_watermark SET taken_at = taken_at - interval '10 minutes'"
                            + " WHERE slot_name = ?", slot); // as if the slot had confirmed nothing for ten minutes
                    jdbc.update(APPEND_ONE);
                    watermarks.round();
                    assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);
                    assertThat(String.valueOf(health.health().getDetails().get("reason")))
                            .contains("has confirmed nothing for", "stuck or paused");
                    assertThat(meters.get("once.outbox.slot.lag.time").tag("slot", slot).gauge().value())
                            .isGreaterThan(540.0);
                    assertThat(meters.get("once.outbox.slot.lag").tag("slot", slot).gauge().value()).isPositive();

                    consumer.confirm(currentLsn());
                    watermarks.round();
                    assertThat(health.health().getStatus()).as("it moved again").isEqualTo(Status.UP);
                    assertThat(meters.get("once.outbox.slot.lag.time").tag("slot", slot).gauge().value())
                            .isLessThan(540.0);
                });
    }

    @Test
    void however_long_a_slot_stands_still_its_watermarks_stay_few_and_its_lag_keeps_growing() throws Exception {
        consumer = Consumer.create(slot);
        SlotWatermarks watermarks = watermarks(Duration.ZERO);
        for (int i = 0; i < 2 * SlotWatermarks.KEPT_UNCONFIRMED; i++) {
            watermarks.round();
        }
        assertThat(jdbc.queryForObject("SELECT count(*) FROM once_relay_watermark WHERE slot_name = ?", Long.class, slot))
                .isEqualTo(SlotWatermarks.KEPT_UNCONFIRMED + 1L);

        jdbc.update("UPDATE once_relay_watermark SET taken_at = taken_at - interval '1 hour' WHERE id = (SELECT min(id)"
                + " FROM once_relay_watermark WHERE slot_name = ?)", slot); // as if the slot stood still an hour
        assertThat(watermarks.status().lag()).as("since the oldest, which is kept").isGreaterThan(Duration.ofMinutes(59));
    }

    static final String APPEND_ONE = """
            INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version, payload)
            VALUES (gen_random_uuid(), 'acme', 'alice', 'order', 'open', 'OrderPlaced', 1, convert_to('{}', 'UTF8'))
            """;

    static final String APPEND_AGED = """
            INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version,
                                      payload, created_at)
            SELECT gen_random_uuid(), 'acme', 'alice', 'order', 'o-' || n, 'OrderPlaced', 1, convert_to('{}', 'UTF8'),
                   now() - CAST(? AS interval)
            FROM generate_series(1, ?) AS n
            """;

    SlotWatermarks watermarks(Duration retention) {
        return new SlotWatermarks(db.dataSource(), slot, SlotWatermarks.Options.ofDefaults().withRetention(retention));
    }

    static long rows() {
        return jdbc.queryForObject("SELECT count(*) FROM outbox_event", Long.class);
    }

    /** Where the next WAL record goes: past every commit so far, flushed to disk or not (synchronous_commit off). */
    static LogSequenceNumber currentLsn() {
        return LogSequenceNumber.valueOf(jdbc.queryForObject("SELECT pg_current_wal_insert_lsn()::text", String.class));
    }

    /** A logical replication consumer of its own slot that confirms exactly what the test tells it to. */
    static final class Consumer implements AutoCloseable {

        private final String slot;
        private final Connection connection;
        private final PGReplicationStream stream;

        private Consumer(String slot, Connection connection, PGReplicationStream stream) {
            this.slot = slot;
            this.connection = connection;
            this.stream = stream;
        }

        static Consumer create(String slot) throws SQLException {
            jdbc.queryForList("SELECT pg_create_logical_replication_slot(?, 'test_decoding')", slot);
            Properties properties = new Properties();
            PGProperty.USER.set(properties, db.server().username());
            PGProperty.PASSWORD.set(properties, db.server().password());
            PGProperty.REPLICATION.set(properties, "database");
            PGProperty.ASSUME_MIN_SERVER_VERSION.set(properties, "10");
            PGProperty.PREFER_QUERY_MODE.set(properties, "simple");
            Connection connection = DriverManager.getConnection(db.server().jdbcUrl(), properties);
            PGReplicationStream stream = connection.unwrap(PGConnection.class).getReplicationAPI().replicationStream()
                    .logical().withSlotName(slot).withStatusInterval(1, TimeUnit.SECONDS).withAutomaticFlush(false)
                    .start();
            await("slot " + slot + " streamed").atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                    "SELECT active FROM pg_replication_slots WHERE slot_name = ?", Boolean.class, slot));
            return new Consumer(slot, connection, stream);
        }

        /** Confirms {@code lsn}, and waits until PostgreSQL shows the slot there. */
        void confirm(LogSequenceNumber lsn) throws SQLException {
            for (ByteBuffer message = stream.readPending(); message != null; message = stream.readPending()) {
                // what the slot sent so far: read, so that the walsender is never held up by a full socket
            }
            stream.setAppliedLSN(lsn);
            stream.setFlushedLSN(lsn);
            await("slot " + slot + " confirmed " + lsn).atMost(Duration.ofSeconds(30)).until(() -> {
                stream.forceUpdateStatus();
                return jdbc.queryForObject("SELECT confirmed_flush_lsn >= CAST(? AS pg_lsn) FROM pg_replication_slots"
                        + " WHERE slot_name = ?", Boolean.class, lsn.asString(), slot);
            });
        }

        @Override
        public void close() throws SQLException {
            stream.close();
            connection.close();
            await("slot " + slot + " released").atMost(Duration.ofSeconds(30)).until(() -> !jdbc.queryForObject(
                    "SELECT active FROM pg_replication_slots WHERE slot_name = ?", Boolean.class, slot));
        }
    }
}
