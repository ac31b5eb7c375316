package dev.once.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.idempotency.OnceMigrations;
import dev.once.relay.EventTransport;
import dev.once.relay.KafkaTransport;
import dev.once.relay.OutboxRelay;
import dev.once.relay.EmbeddedRelayContractIT;
import dev.once.relay.RelayListener;
import dev.once.relay.RelayOptions;
import dev.once.relay.TopicRouter;
import dev.once.relay.cdc.internal.EngineProperties;
import dev.once.test.ReplicationCleanup;
import dev.once.test.TestKafka;
import dev.once.test.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.jdbc.core.JdbcTemplate;

/** The relay contract for the Debezium CDC relay, plus leadership, stored offsets and the heartbeat. */
class CdcRelayIT extends EmbeddedRelayContractIT {

    static CdcSettings settings() {
        String slot = ("once_" + db.schema()).toLowerCase();
        return CdcSettings.of(db.server().jdbcUrl(), db.server().username(), db.server().password(), db.schema())
                .withSlot(slot, slot).withTimings(Duration.ofMillis(500), Duration.ofMillis(200));
    }

    /** The DataSource the next relays started use. */
    private DataSource relayDataSource = db.dataSource();

    @Override
    protected OutboxRelay newRelay(String name, EventTransport transport, RelayOptions options) {
        return new CdcRelay(name, relayDataSource, settings(), transport, options, RelayListener.NONE);
    }

    @AfterAll
    static void dropSlot() {
        ReplicationCleanup.drop(db.dataSource(), settings().slotName(), settings().publicationName());
    }

    @Test
    void a_restart_resumes_from_the_stored_offset_instead_of_replaying_from_the_start() {
        String topic = prefix + ".order";
        int beforeStop = 3_000;
        int whileStopped = 500;
        int sentinel = beforeStop + whileStopped + 1;
        // Started without the stored offset, the relay takes a new snapshot of the pending rows and streams on from
        // the snapshot's position, so the events written while it was stopped are published once either way. What
        // tells the two apart is a row still pending although its event was published before the stop (see
        // keepRowsOf): the snapshot publishes it again, the resumed stream does not. These are the first events,
        // far from the last batch before the stop.
        int kept = 100;
        try (OutboxTrigger keeping = keepRowsOf(kept)) {
            commitEvents(1, beforeStop);
            OutboxRelay first = started("first");
            // every other row deleted: published, and confirmed by the slot
            await().atMost(Duration.ofSeconds(120)).until(() -> pending() == kept);
            // and the offsets past it, which the slot's confirmation follows
            long recorded = currentLsn();
            await().atMost(Duration.ofSeconds(30)).until(() -> storedLsn() >= recorded);
            first.close();
        }
        Map<TopicPartition, Long> stop = endOffsets(topic);
        assertThat(copiesByN(read(topic, Map.of(), stop))).as("published before the stop").hasSize(beforeStop);

        commitEvents(beforeStop + 1, whileStopped);
        started("second");
        // Committed after the restart, so streamed after every insert before it: once its row is gone, everything
        // the second relay streams of the earlier inserts is in Kafka too.
        commitEvents(sentinel, 1);
        await().atMost(Duration.ofSeconds(120)).until(() -> pendingFrom(beforeStop + 1) == 0);
        stopRelays(); // nothing is published after this, so the topic's end is final
        Map<Long, Long> copies = copiesByN(read(topic, stop, endOffsets(topic)));

        Map<Long, Long> again = new TreeMap<>(copies);
        again.keySet().removeIf(n -> n > beforeStop);
        Map<Long, Long> written = new TreeMap<>(copies);
        written.keySet().removeIf(n -> n <= beforeStop || n == sentinel);
        System.out.printf("CDC restart: %d records after the restart, %d of events published before the stop, "
                + "%d of %d events written while stopped%n", copies.values().stream().mapToLong(Long::longValue).sum(),
                again.values().stream().mapToLong(Long::longValue).sum(), written.values().stream()
                        .mapToLong(Long::longValue).sum(), whileStopped);
        assertThat(again.keySet()).as("published before the stop, rows still pending: only a new snapshot reads them")
                .noneMatch(n -> n <= kept);
        // A clean stop commits the offsets of every batch the relay recorded; only a batch it interrupted, at most
        // the engine's batch size of the last events streamed, was not, and the resumed stream sends it again.
        int lastBatch = EngineProperties.batchSize(RelayOptions.ofDefaults());
        assertThat(again).as("published again after the restart, beyond the last batch before the stop")
                .allSatisfy((n, times) -> assertThat(n).isGreaterThan(beforeStop - lastBatch))
                .allSatisfy((n, times) -> assertThat(times).isOne());
        // The stored offset lies before these inserts, so the resumed stream reads each once; a second copy would
        // mean a row read twice, or a batch sent again because Kafka did not acknowledge it within the transport's
        // 10 seconds, which a healthy broker does not cause.
        assertThat(written).as("events written while the relay was stopped, by copies published").hasSize(whileStopped)
                .allSatisfy((n, times) -> assertThat(times).isOne());
    }

    @Test
    void the_offsets_commit_waiting_for_the_disk_even_where_the_relays_connections_commit_without_waiting() {
        // A deployment may set synchronous_commit = off for its role, its database or its pool. The slot moves on once
        // the offsets are saved: they must not be lost behind it.
        jdbc.execute("CREATE TABLE offset_commits (synchronous_commit text NOT NULL)");
        jdbc.execute("CREATE FUNCTION note_offset_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                + " INSERT INTO offset_commits VALUES (current_setting('synchronous_commit')); RETURN NEW; END $$");
        jdbc.execute("CREATE TRIGGER note_offset_commit BEFORE INSERT OR UPDATE ON once_relay_offset FOR EACH ROW"
                + " EXECUTE FUNCTION note_offset_commit()");
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(db.jdbcUrl());
        config.setUsername(db.server().username());
        config.setPassword(db.server().password());
        config.setMaximumPoolSize(6);
        config.setConnectionInitSql("SET synchronous_commit = off");
        try (HikariDataSource asynchronous = new HikariDataSource(config)) {
            relayDataSource = asynchronous;
            started("asynchronous");
            commitEvents(1, 10);
            consumeUntil(prefix + ".order", 10);
            await().atMost(Duration.ofSeconds(30)).until(() -> pending() == 0);
            await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM offset_commits", Long.class) > 0);
            stopRelays();
            assertThat(jdbc.queryForList("SELECT DISTINCT synchronous_commit FROM offset_commits", String.class))
                    .containsExactly("on");
        } finally {
            jdbc.execute("DROP TRIGGER IF EXISTS note_offset_commit ON once_relay_offset;"
                    + " DROP FUNCTION IF EXISTS note_offset_commit(); DROP TABLE IF EXISTS offset_commits");
        }
    }

    /**
     * A row trigger on the outbox table, and its function, until closed; with a {@code deferral} (such as
     * {@code DEFERRABLE INITIALLY DEFERRED}), a constraint trigger, which fires at the commit.
     */
    private final class OutboxTrigger implements AutoCloseable {

        private final String name;

        OutboxTrigger(String name, String events, String when, String body) {
            this(name, events, when, body, null);
        }

        OutboxTrigger(String name, String events, String when, String body, String deferral) {
            this.name = name;
            jdbc.execute("CREATE FUNCTION " + name + "() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN " + body + " END $$");
            jdbc.execute("CREATE " + (deferral == null ? "" : "CONSTRAINT ") + "TRIGGER " + name + " " + events
                    + " ON outbox_event " + (deferral == null ? "" : deferral + " ") + "FOR EACH ROW WHEN (" + when + ")"
                    + " EXECUTE FUNCTION " + name + "()");
        }

        @Override
        public void close() {
            jdbc.execute("DROP TRIGGER IF EXISTS " + name + " ON outbox_event; DROP FUNCTION IF EXISTS " + name + "()");
        }
    }

    /** Where the write-ahead log ends now, as a number. */
    long currentLsn() {
        return jdbc.queryForObject("SELECT pg_current_wal_lsn() - '0/0'", Long.class);
    }

    /** The position in the write-ahead log of the relay's stored offsets: what a new leader streams from. */
    long storedLsn() {
        List<byte[]> offsets = jdbc.queryForList("SELECT offset_value FROM once_relay_offset WHERE store_key = ?",
                byte[].class, settings().slotName());
        return offsets.stream().mapToLong(o -> JSON.readTree(o).get("lsn").asLong()).max().orElse(-1);
    }

    /**
     * Keeps the rows of events 1 to {@code last} from being deleted once published, until closed: pending although
     * their events were published, so that only a new snapshot would publish them again.
     */
    private OutboxTrigger keepRowsOf(int last) {
        return new OutboxTrigger("keep_rows", "BEFORE DELETE",
                "(convert_from(OLD.payload, 'UTF8')::jsonb->>'n')::int <= " + last, "RETURN NULL;");
    }

    long pendingFrom(int n) {
        return jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE published_at IS NULL AND parked_at IS NULL"
                + " AND (convert_from(payload, 'UTF8')::jsonb->>'n')::int >= ?", Long.class, n);
    }

    /** How many records carry each event, by the event's n. */
    static Map<Long, Long> copiesByN(List<ConsumerRecord<String, byte[]>> records) {
        Map<Long, Long> copies = new TreeMap<>();
        records.forEach(r -> copies.merge(JSON.readTree(r.value()).get("n").asLong(), 1L, Long::sum));
        return copies;
    }

    static Map<TopicPartition, Long> endOffsets(String topic) {
        try (KafkaConsumer<String, byte[]> consumer = consumer()) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            return consumer.endOffsets(partitions);
        }
    }

    static List<ConsumerRecord<String, byte[]>> read(String topic, Map<TopicPartition, Long> from, Map<TopicPartition, Long> to) {
        List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = consumer()) {
            consumer.assign(to.keySet());
            to.keySet().forEach(p -> consumer.seek(p, from.getOrDefault(p, 0L)));
            await().atMost(Duration.ofSeconds(60)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10)).until(() -> {
                for (ConsumerRecord<String, byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    if (r.offset() < to.get(new TopicPartition(r.topic(), r.partition()))) {
                        records.add(r);
                    }
                }
                return to.entrySet().stream().allMatch(e -> consumer.position(e.getKey()) >= e.getValue());
            });
        }
        return records;
    }

    static KafkaConsumer<String, byte[]> consumer() {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        return new KafkaConsumer<>(config, new StringDeserializer(), new ByteArrayDeserializer());
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
    void on_a_postgresql_that_takes_only_client_certificates_it_streams_with_the_tls_its_jdbc_url_names(@TempDir Path dir)
            throws Exception {
        openssl(dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
                "-subj", "/CN=once-test-ca");
        signedCertificate(dir, "server", "/CN=localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1");
        signedCertificate(dir, "client", "/CN=relay", "basicConstraints=CA:FALSE");
        openssl(dir, "pkcs8", "-topk8", "-inform", "PEM", "-outform", "DER", "-nocrypt", "-in", "client.key", "-out",
                "client.pk8"); // the JDBC driver reads a client key as PKCS-8
        Files.setPosixFilePermissions(dir.resolve("server.key"), PosixFilePermissions.fromString("rw-------"));
        Files.setPosixFilePermissions(dir.resolve("client.pk8"), PosixFilePermissions.fromString("rw-------"));
        // the relay's role gets in over TLS with its certificate only; the superuser as usual (zonky's own checks)
        Files.writeString(dir.resolve("pg_hba.conf"), """
                hostssl all relay all cert
                hostssl replication relay all cert
                host all relay all reject
                host replication relay all reject
                host all postgres all trust
                local all all trust
                """);
        try (TestPostgres.Embedded server = TestPostgres.startEmbedded(Map.of("ssl", "on",
                "ssl_cert_file", dir.resolve("server.crt").toString(), "ssl_key_file", dir.resolve("server.key").toString(),
                "ssl_ca_file", dir.resolve("ca.crt").toString(), "hba_file", dir.resolve("pg_hba.conf").toString()))) {
            JdbcTemplate admin = new JdbcTemplate(server.postgres().getPostgresDatabase());
            admin.execute("CREATE ROLE relay LOGIN SUPERUSER REPLICATION");
            String url = server.jdbcUrl("postgres") + "?sslmode=verify-full&sslrootcert=" + dir.resolve("ca.crt")
                    + "&sslcert=" + dir.resolve("client.crt") + "&sslkey=" + dir.resolve("client.pk8");
            HikariConfig pool = new HikariConfig();
            pool.setJdbcUrl(url);
            pool.setUsername("relay");
            pool.setMaximumPoolSize(4);
            try (HikariDataSource dataSource = new HikariDataSource(pool)) {
                OnceMigrations.migrate(dataSource);
                CdcSettings settings = CdcSettings.of(url, "relay", null, "public").withSlot("once_tls", "once_tls")
                        .withTimings(Duration.ofMillis(500), Duration.ofMillis(200));
                Map<String, Object> producer = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
                try (CdcRelay relay = new CdcRelay("tls", dataSource, settings, new KafkaTransport(producer,
                        TopicRouter.byAggregateType(prefix), Duration.ofSeconds(10), SIGNING), RelayOptions.ofDefaults(),
                        RelayListener.NONE)) {
                    relay.start();
                    await().atMost(Duration.ofSeconds(60)).until(() -> relay.state().status()
                            == OutboxRelay.RelayState.Status.RUNNING);
                    jdbc = new JdbcTemplate(dataSource); // the events of this test go to this server
                    commitEvents(1, 100);

                    assertThat(consumeUntil(prefix + ".order", 100).distinctEvents()).isEqualTo(100);
                    assertThat(admin.queryForList("SELECT s.client_dn FROM pg_stat_replication r JOIN pg_stat_ssl s"
                            + " USING (pid) WHERE r.usename = 'relay' AND s.ssl", String.class))
                            .as("Debezium's replication connection, over TLS with the relay's certificate")
                            .containsExactly("/CN=relay");
                }
            }
        }
    }

    /** Runs openssl in {@code dir}: the test's own certificate authority, so that nothing depends on the machine's. */
    private static void openssl(Path dir, String... arguments) throws Exception {
        List<String> command = new ArrayList<>(List.of("openssl"));
        command.addAll(List.of(arguments));
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor()).as("openssl %s: %s", arguments[0], output).isZero();
    }

    /** {@code name}.key and {@code name}.crt, signed by the test's ca.crt, with {@code extension}. */
    private static void signedCertificate(Path dir, String name, String subject, String extension) throws Exception {
        openssl(dir, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-out", name + ".csr", "-subj",
                subject);
        Files.writeString(dir.resolve(name + ".ext"), extension + "\n");
        openssl(dir, "x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", name + ".crt", "-days", "2", "-extfile", name + ".ext");
    }

    /**
     * The heartbeat writes a logical message into the WAL, which moves Debezium's position, and the heartbeat record
     * after it carries that position to the offsets and the slot: no table, no grant.
     */
    @Test
    void on_a_quiet_outbox_the_heartbeat_moves_the_slot_past_the_last_event_and_its_row_leaves() {
        started("quiet");
        commitEvents(1, 1);
        consumeUntil(prefix + ".order", 1);
        String written = jdbc.queryForObject("SELECT pg_current_wal_insert_lsn()::text", String.class);

        await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject("SELECT confirmed_flush_lsn > CAST(? AS"
                + " pg_lsn) FROM pg_replication_slots WHERE slot_name = ?", Boolean.class, written, settings().slotName()));
        await().atMost(Duration.ofSeconds(30)).until(() -> pending() == 0);
    }

    /**
     * A row leaves the outbox once the slot has confirmed it, never because its event was published or it is old:
     * while the relay cannot store its offsets, the slot stays put, and published rows stay pending however many
     * watermark rounds pass.
     */
    @Test
    void published_rows_stay_while_the_slot_is_held_back_and_leave_once_it_confirms_them() throws Exception {
        started("held");
        commitEvents(1, 1);
        consumeUntil(prefix + ".order", 1);
        await().atMost(Duration.ofSeconds(30)).until(() -> pending() == 0);
        try (OffsetsWaiting held = new OffsetsWaiting()) {
            commitEvents(2, 100);
            consumeUntil(prefix + ".order", 101);
            long from = jdbc.queryForObject("SELECT COALESCE(max(id), 0) FROM once_relay_watermark", Long.class);
            await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject("SELECT count(*) FROM"
                    + " once_relay_watermark WHERE id > ?", Long.class, from) >= 3);
            assertThat(pending()).as("published, not confirmed, after three watermark rounds").isEqualTo(100);
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> pending() == 0);
    }

    /**
     * The walsender ended and the slot dropped while writers go on, as a failover to a standby without the slot does:
     * the leader notices, Debezium creates the slot anew with a snapshot of every row not yet confirmed, and every
     * event arrives.
     */
    @Test
    void a_slot_dropped_under_load_is_created_anew_and_every_event_arrives() throws Exception {
        started("dropped");
        String slot = settings().slotName();
        int events = 6_000;
        CompletableFuture<Void> writers = CompletableFuture.runAsync(() -> {
            for (int from = 1; from <= events; from += 100) {
                commitEvents(from, 100);
            }
        });
        await().atMost(Duration.ofSeconds(60)).until(() -> endOffsets(prefix + ".order").values().stream()
                .mapToLong(Long::longValue).sum() >= 500);
        await("slot " + slot + " dropped").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20))
                .until(() -> dropped(slot));
        writers.get(120, TimeUnit.SECONDS);

        Received received = consumeUntil(prefix + ".order", events);
        assertThat(received.distinctEvents()).isEqualTo(events);
        System.out.printf("slot dropped under load: %d records for %d events%n", received.records().size(), events);
        await().atMost(Duration.ofSeconds(60)).until(() -> pending() == 0);
        assertThat(jdbc.queryForObject("SELECT active FROM pg_replication_slots WHERE slot_name = ?", Boolean.class,
                slot)).as("created anew, and streamed").isTrue();
    }

    /**
     * With a retention, confirmed rows are kept, marked published: a slot created anew snapshots only the rows its
     * predecessor had not confirmed, not the whole retention.
     */
    @Test
    void a_new_slots_snapshot_sends_only_what_the_old_slot_had_not_confirmed_not_the_retention() {
        String topic = prefix + ".order";
        String slot = settings().slotName();
        OutboxRelay first = started("first", Map.of(), RelayOptions.ofDefaults().withRetention(Duration.ofHours(1)));
        commitEvents(1, 300);
        consumeUntil(topic, 300);
        await().atMost(Duration.ofSeconds(60)).until(() -> pending() == 0);
        first.close();
        await("slot " + slot + " dropped").atMost(Duration.ofSeconds(60)).until(() -> dropped(slot));
        commitEvents(301, 20);

        started("second", Map.of(), RelayOptions.ofDefaults().withRetention(Duration.ofHours(1)));
        consumeUntil(topic, 320);
        await().atMost(Duration.ofSeconds(60)).until(() -> pending() == 0);
        stopRelays();
        assertThat(copiesByN(read(topic, Map.of(), endOffsets(topic)))).as("each event once: the 300 kept rows were "
                + "marked published, so the new slot's snapshot left them out").hasSize(320)
                .allSatisfy((n, copies) -> assertThat(copies).isOne());
        assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE published_at IS NOT NULL", Long.class))
                .as("kept for the retention").isEqualTo(320);
    }

    /** Ends the walsender that streams {@code slot} and drops it; false while a walsender holds it again. */
    private boolean dropped(String slot) {
        jdbc.queryForList("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = ?"
                + " AND active_pid IS NOT NULL", slot);
        try {
            jdbc.queryForList("SELECT pg_drop_replication_slot(?)", slot);
            return true;
        } catch (org.springframework.dao.DataAccessException e) {
            return false; // taken again before the drop: the relay reconnected
        }
    }

    /** Makes every save of the relay's offsets wait until closed, as a consumer paused before it stores its offsets. */
    private final class OffsetsWaiting implements AutoCloseable {

        private final long lock = ThreadLocalRandom.current().nextLong(1, Integer.MAX_VALUE);
        private final Connection holder;

        OffsetsWaiting() throws SQLException {
            holder = db.dataSource().getConnection();
            holder.setAutoCommit(false);
            holder.createStatement().execute("SELECT pg_advisory_xact_lock(" + lock + ")");
            jdbc.execute("CREATE FUNCTION wait_for_test() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                    + " PERFORM pg_advisory_xact_lock_shared(" + lock + "); RETURN NEW; END $$");
            jdbc.execute("CREATE TRIGGER wait_for_test BEFORE INSERT OR UPDATE ON once_relay_offset FOR EACH ROW"
                    + " EXECUTE FUNCTION wait_for_test()");
        }

        @Override
        public void close() throws SQLException {
            try (holder) {
                holder.rollback(); // the lock goes with the transaction: the waiting saves go on
            } finally {
                jdbc.execute("DROP TRIGGER IF EXISTS wait_for_test ON once_relay_offset;"
                        + " DROP FUNCTION IF EXISTS wait_for_test()");
            }
        }
    }

    @Test
    void a_publication_left_broader_is_narrowed_to_inserts_of_the_columns_a_message_is_made_of() {
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        String publication = settings().publicationName();
        jdbc.execute("CREATE TABLE IF NOT EXISTS " + db.schema() + ".not_the_outbox (id uuid PRIMARY KEY)");
        String tables = db.schema() + ".outbox_event, " + db.schema() + ".not_the_outbox"; // an operator widened it
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
                    .isEqualTo(CdcPublication.MESSAGE_COLUMNS);
        }
    }
}
