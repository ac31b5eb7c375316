package dev.once.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.test.ReplicationCleanup;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;

/** The relay contract for the Debezium CDC relay, plus leadership, stored offsets and the heartbeat. */
class CdcRelayIT extends RelayContractIT {

    static CdcSettings settings() {
        String slot = ("once_" + db.schema()).toLowerCase();
        return CdcSettings.of(db.server().jdbcUrl(), db.server().username(), db.server().password(), db.schema())
                .withSlot(slot, slot).withTimings(Duration.ofMillis(500), Duration.ofMillis(200));
    }

    @Override
    OutboxRelay newRelay(String name, EventTransport transport, RelayOptions options) {
        return new CdcRelay(name, db.dataSource(), settings(), transport, options, RelayListener.NONE);
    }

    @AfterAll
    static void dropSlot() {
        ReplicationCleanup.drop(db.dataSource(), settings().slotName(), settings().publicationName());
    }

    @Test
    void a_restart_resumes_from_the_stored_offset_instead_of_replaying_from_the_start() {
        commitEvents(1, 3_000);
        OutboxRelay first = started("first");
        consumeUntil(prefix + ".order", 3_000);
        first.close();
        commitEvents(3_001, 500);

        started("second");
        Received received = consumeUntil(prefix + ".order", 3_500);

        System.out.printf("CDC restart: %d records for 3500 events, %d duplicates%n", received.records().size(),
                received.duplicates());
        assertThat(received.duplicates()).as("replayed after the restart").isLessThan(1_000);
        assertThat(new JdbcTemplate(db.dataSource()).queryForObject(
                "SELECT count(*) FROM once_relay_offset WHERE store_key = ?", Long.class, settings().slotName())).isPositive();
    }

    @Test
    void of_two_instances_only_the_leader_streams_and_the_standby_takes_over_when_it_dies() {
        CdcRelay a = (CdcRelay) started("a");
        CdcRelay b = (CdcRelay) started("b");
        assertThat(a.isLeader() ^ b.isLeader()).as("exactly one leader").isTrue();
        CdcRelay leader = a.isLeader() ? a : b;
        CdcRelay standby = leader == a ? b : a;
        assertThat(standby.state().status()).isEqualTo(OutboxRelay.RelayState.Status.STANDBY);
        commitEvents(1, 2_000);
        consumeUntil(prefix + ".order", 2_000);

        leader.close();
        commitEvents(2_001, 2_000);

        await().atMost(Duration.ofSeconds(20)).until(standby::isLeader);
        Received received = consumeUntil(prefix + ".order", 4_000);
        assertThat(received.distinctEvents()).isEqualTo(4_000);
        assertThat(received.outOfOrder()).isZero();
    }

    @Test
    void a_leader_that_loses_its_lock_connection_stops_streaming_and_leadership_moves_on() {
        CdcRelay a = (CdcRelay) started("a");
        CdcRelay b = (CdcRelay) started("b");
        CdcRelay leader = a.isLeader() ? a : b;
        CdcRelay standby = leader == a ? b : a;
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());

        // the database ends the session that holds the leader lock, as a failover or a network cut would
        jdbc.queryForList("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND classid = ?"
                + " AND granted", Boolean.class, LeaderLock.LEADER_LOCK_SPACE);
        commitEvents(1, 1_000);

        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10)).until(() -> standby.isLeader()
                || leader.state().status() == OutboxRelay.RelayState.Status.FAILED);
        await().atMost(Duration.ofSeconds(30)).until(() -> standby.isLeader() ^ leader.isLeader());
        Received received = consumeUntil(prefix + ".order", 1_000);
        assertThat(received.distinctEvents()).isEqualTo(1_000);
        assertThat(received.outOfOrder()).isZero();
    }

    @Test
    void on_a_quiet_database_the_heartbeat_moves_the_slot_forward() {
        started("quiet");
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        String slot = settings().slotName();
        String before = jdbc.queryForObject("SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = ?",
                String.class, slot);

        await().atMost(Duration.ofSeconds(30)).until(() -> !before.equals(jdbc.queryForObject(
                "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = ?", String.class, slot)));
    }

    @Test
    void a_publication_left_broader_is_narrowed_to_inserts_of_the_columns_a_message_is_made_of() {
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        String publication = settings().publicationName();
        String tables = db.schema() + ".outbox_event, " + db.schema() + ".once_relay_heartbeat";
        if (jdbc.queryForObject("SELECT count(*) FROM pg_publication WHERE pubname = ?", Long.class, publication) == 0) {
            jdbc.execute("CREATE PUBLICATION " + publication + " FOR TABLE " + tables);
        } else { // altered, not dropped: a slot may already stream from it
            jdbc.execute("ALTER PUBLICATION " + publication + " SET TABLE " + tables);
            jdbc.execute("ALTER PUBLICATION " + publication + " SET (publish = 'insert, update, delete, truncate')");
        }
        commitEvents(1, 100);

        started("narrowing");
        Received received = consumeUntil(prefix + ".order", 100);

        assertThat(received.distinctEvents()).isEqualTo(100);
        assertThat(received.records()).allSatisfy(r -> assertThat(r.headers().lastHeader("traceparent")).isNotNull());
        assertThat(jdbc.queryForMap("SELECT pubinsert, pubupdate, pubdelete, pubtruncate FROM pg_publication WHERE pubname = ?",
                publication)).containsEntry("pubinsert", true).containsEntry("pubupdate", false)
                .containsEntry("pubdelete", false).containsEntry("pubtruncate", false);
        if (jdbc.queryForObject("SELECT current_setting('server_version_num')::int", Integer.class) >= 150_000) {
            assertThat(jdbc.queryForObject("SELECT array_to_string(attnames, ', ') FROM pg_publication_tables "
                    + "WHERE pubname = ? AND tablename = 'outbox_event'", String.class, publication))
                    .isEqualTo(CdcRelay.MESSAGE_COLUMNS);
        }
    }
}
