package dev.once.relay.cdc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.idempotency.OnceMigrations;
import dev.once.test.TestDatabase;
import io.debezium.embedded.EmbeddedWorkerConfig;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.jdbc.core.JdbcTemplate;

/** Debezium's offsets in PostgreSQL: what the store reads back is what PostgreSQL holds. */
class JdbcOffsetBackingStoreIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    static final String KEY = "offsets_it";
    static final ByteBuffer PARTITION = bytes("[\"engine\",{\"server\":\"once\"}]");

    private final JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());

    @BeforeAll
    static void migrate() {
        OnceMigrations.migrate(db.dataSource());
        JdbcOffsetBackingStore.register(KEY, db.dataSource());
    }

    @AfterEach
    void dropTrigger() {
        jdbc.execute("DROP TRIGGER IF EXISTS refuse_offsets ON once_relay_offset; DROP FUNCTION IF EXISTS refuse_offsets()");
    }

    @Test
    void offsets_whose_save_failed_are_not_read_back_by_a_task_that_restarts_on_the_same_store() throws Exception {
        JdbcOffsetBackingStore store = started(KEY);
        try {
            save(store, "first");
            // PostgreSQL going away in the middle of a save, as during an immediate stop
            jdbc.execute("CREATE FUNCTION refuse_offsets() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                    + " RAISE EXCEPTION 'the save fails'; END $$");
            jdbc.execute("CREATE TRIGGER refuse_offsets BEFORE INSERT OR UPDATE ON once_relay_offset FOR EACH ROW"
                    + " EXECUTE FUNCTION refuse_offsets()");
            assertThatThrownBy(() -> save(store, "second")).isInstanceOf(ExecutionException.class);

            // Debezium's task, restarted after a retriable error, resumes from what this returns
            assertThat(read(store)).isEqualTo("first");

            dropTrigger();
            save(store, "third");
            assertThat(read(store)).isEqualTo("third");
        } finally {
            store.stop();
        }
        JdbcOffsetBackingStore next = started(KEY);
        try {
            assertThat(read(next)).as("read by the next leader's store").isEqualTo("third");
        } finally {
            next.stop();
        }
    }

    @Test
    void a_store_started_before_postgresql_restarted_saves_no_offsets_and_one_started_after_it_does(@TempDir Path dir)
            throws Exception {
        // The relay's bookkeeping commits without waiting for the disk; the offsets saved after it make it durable,
        // but only on the same server: a restart may have lost it, and the offsets must not move past it.
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        EmbeddedPostgres server = restartable(dir, port);
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:postgresql://127.0.0.1:" + port + "/postgres");
        config.setUsername("postgres");
        config.setMaximumPoolSize(2);
        try (HikariDataSource dataSource = new HikariDataSource(config)) {
            OnceMigrations.migrate(dataSource);
            JdbcOffsetBackingStore.register("restarted", dataSource);
            JdbcOffsetBackingStore before = started("restarted");
            try {
                save(before, "first");

                server.close();
                server = restartable(dir, port);

                // the first tries fail on the pool's broken connections; then on the restart itself
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThatThrownBy(
                        () -> save(before, "second")).isInstanceOf(ExecutionException.class)
                        .hasMessageContaining("PostgreSQL restarted after this CDC engine started"));
                assertThat(read(before)).isEqualTo("first");
            } finally {
                before.stop();
            }
            JdbcOffsetBackingStore after = started("restarted");
            try {
                assertThat(read(after)).isEqualTo("first");
                save(after, "third");
            } finally {
                after.stop();
            }
            JdbcOffsetBackingStore next = started("restarted");
            try {
                assertThat(read(next)).isEqualTo("third");
            } finally {
                next.stop();
            }
        } finally {
            JdbcOffsetBackingStore.unregister("restarted");
            server.close();
        }
    }

    private static EmbeddedPostgres restartable(Path dir, int port) throws IOException {
        return EmbeddedPostgres.builder().setDataDirectory(dir).setCleanDataDirectory(false).setPort(port).start();
    }

    private static JdbcOffsetBackingStore started(String key) {
        JdbcOffsetBackingStore store = new JdbcOffsetBackingStore();
        store.configure(new EmbeddedWorkerConfig(new HashMap<>(Map.of(JdbcOffsetBackingStore.KEY_PROPERTY, key))));
        store.start();
        return store;
    }

    private static void save(JdbcOffsetBackingStore store, String offset) throws Exception {
        store.set(Map.of(PARTITION, bytes(offset)), null).get(10, TimeUnit.SECONDS);
    }

    private static String read(JdbcOffsetBackingStore store) throws Exception {
        ByteBuffer value = store.get(List.of(PARTITION)).get(10, TimeUnit.SECONDS).get(PARTITION);
        return value == null ? null : StandardCharsets.UTF_8.decode(value.duplicate()).toString();
    }

    private static ByteBuffer bytes(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }
}
