package dev.once.relay.cdc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.idempotency.OnceMigrations;
import dev.once.test.TestDatabase;
import io.debezium.embedded.EmbeddedWorkerConfig;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
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
