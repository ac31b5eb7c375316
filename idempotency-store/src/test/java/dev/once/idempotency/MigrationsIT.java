package dev.once.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.OnceConfigurationException;
import dev.once.test.TestDatabase;
import org.flywaydb.core.Flyway;
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
        assertThat(executed).as("the baseline").isOne();
        assertThat(OnceMigrations.migrate(db.dataSource(), app).migrationsExecuted).isZero();

        assertThat(jdbc.queryForObject("SELECT count(*) FROM " + app + "." + OnceMigrations.HISTORY_TABLE
                + " WHERE success", Long.class)).isEqualTo(executed + 1); // the baseline marker and every migration
        assertThat(jdbc.queryForObject("SELECT count(*) FROM " + app + ".outbox_event", Long.class)).isZero();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM " + app + ".idempotency_record", Long.class)).isZero();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM " + app + ".flyway_schema_history", Long.class)).isZero();
        jdbc.execute("DROP SCHEMA " + app + " CASCADE");
    }

    /** Keys, scopes and statuses are validated by the store before it writes: the hot tables have no CHECK constraint. */
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

    @Test
    void a_new_database_gets_the_one_baseline_migration_of_0_1_0() {
        String fresh = db.schema() + "_fresh";
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());

        assertThat(OnceMigrations.migrate(db.dataSource(), fresh).migrationsExecuted).isOne();

        assertThat(jdbc.queryForList("SELECT script FROM " + fresh + "." + OnceMigrations.HISTORY_TABLE
                + " WHERE success AND type = 'SQL'", String.class)).containsExactly("V1__baseline.sql");
        assertThat(jdbc.queryForList("SELECT tablename FROM pg_tables WHERE schemaname = ? ORDER BY tablename",
                String.class, fresh)).containsExactly("idempotency_record", "once_handler_claim", "once_handler_claim_undated",
                "once_handler_route", "once_operator_audit", "once_parked_event", "once_relay_offset",
                "once_relay_watermark", "once_schema_history", "outbox_event");
        jdbc.execute("DROP SCHEMA " + fresh + " CASCADE");
    }

    /** The steps of 0.1.0's development were squashed into its baseline: a schema they made is refused, not mixed. */
    @Test
    void a_schema_made_by_a_development_build_before_0_1_0_stops_the_migration_with_the_fix() {
        String old = db.schema() + "_pre";
        Flyway.configure().dataSource(db.dataSource()).schemas(old).table(OnceMigrations.HISTORY_TABLE)
                .locations("classpath:db/once/pre-release").load().migrate(); // as a build before 0.1.0 left it

        assertThatThrownBy(() -> OnceMigrations.migrate(db.dataSource(), old))
                .isInstanceOfSatisfying(OnceConfigurationException.class, e -> {
                    assertThat(e.problem()).contains(old, OnceMigrations.PRE_RELEASE_FIRST_SCRIPT);
                    assertThat(e.fix()).contains("drop Once's tables", "UPGRADING.md");
                });
        assertThat(new JdbcTemplate(db.dataSource()).queryForObject("SELECT count(*) FROM " + old + "."
                + OnceMigrations.HISTORY_TABLE + " WHERE type = 'SQL'", Long.class)).as("nothing applied").isOne();
        new JdbcTemplate(db.dataSource()).execute("DROP SCHEMA " + old + " CASCADE");
    }
}
