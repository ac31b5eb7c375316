package dev.once.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.test.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.core.JdbcTemplate;

/** The schema ships in the jar and lives beside an application's own tables and Flyway history. */
class MigrationsIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create();

    @Test
    void migrates_a_schema_that_already_holds_application_tables_and_is_idempotent() {
        String app = db.schema() + "_app";
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        jdbc.execute("CREATE SCHEMA " + app);
        jdbc.execute("CREATE TABLE " + app + ".flyway_schema_history (installed_rank int)"); // the application's own
        jdbc.execute("CREATE TABLE " + app + ".accounts (id bigint)");

        int executed = OnceMigrations.migrate(db.dataSource(), app).migrationsExecuted;
        assertThat(executed).isGreaterThanOrEqualTo(2);
        assertThat(OnceMigrations.migrate(db.dataSource(), app).migrationsExecuted).isZero();

        assertThat(jdbc.queryForObject("SELECT count(*) FROM " + app + "." + OnceMigrations.HISTORY_TABLE
                + " WHERE success", Long.class)).isEqualTo(executed + 1); // the baseline marker and every migration
        assertThat(jdbc.queryForObject("SELECT count(*) FROM " + app + ".outbox_event", Long.class)).isZero();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM " + app + ".idempotency_record", Long.class)).isZero();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM " + app + ".flyway_schema_history", Long.class)).isZero();
        jdbc.execute("DROP SCHEMA " + app + " CASCADE");
    }

    /** Keys, scopes and statuses are validated by the store before it writes (V5 dropped their CHECK constraints). */
    @Test
    void the_table_enforces_one_record_per_scope_and_its_required_columns() {
        OnceMigrations.migrate(db.dataSource());
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        String insert = "INSERT INTO idempotency_record (tenant_id, user_id, route, idempotency_key, request_hash, status,"
                + " locked_until, expires_at) VALUES ('t', 'u', 'r', ?, 'h', ?, now(), now() + interval '1 day')";

        jdbc.update(insert, "k", "processing");

        assertThatThrownBy(() -> jdbc.update(insert, "k", "processing")).isInstanceOf(DataIntegrityViolationException.class)
                .hasMessageContaining("idempotency_record_scope_uk");
        assertThatThrownBy(() -> jdbc.update(insert, "k2", null)).isInstanceOf(DataIntegrityViolationException.class)
                .hasMessageContaining("status");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM pg_constraint WHERE contype = 'c' AND conrelid IN"
                + " (to_regclass('idempotency_record'), to_regclass('outbox_event'))", Long.class))
                .as("no CHECK constraint on the hot tables: PostgreSQL would rebuild it for every write").isZero();
    }

    /**
     * Debezium builds the key of every change event it decodes with the same compiled code; a heartbeat key of another
     * type than the outbox's failed the JIT's type check there at every beat, which threw the code away (V8).
     */
    @Test
    void the_heartbeat_table_is_keyed_like_the_outbox_so_that_beats_do_not_slow_decoding() {
        OnceMigrations.migrate(db.dataSource());
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        String keyTypes = """
                SELECT format_type(a.atttypid, a.atttypmod) FROM pg_index i
                JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
                WHERE i.indrelid = to_regclass(?) AND i.indisprimary
                """;

        assertThat(jdbc.queryForList(keyTypes, String.class, "once_relay_heartbeat"))
                .isEqualTo(jdbc.queryForList(keyTypes, String.class, "outbox_event")).containsExactly("uuid");
        jdbc.update("INSERT INTO once_relay_heartbeat (slot_name, beat_at) VALUES ('a_slot', now())"); // as a beat does
        assertThat(jdbc.queryForObject("SELECT count(id) FROM once_relay_heartbeat", Long.class)).isOne();
    }
}
