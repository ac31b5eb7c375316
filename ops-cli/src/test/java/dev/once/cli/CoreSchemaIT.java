package dev.once.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.idempotency.OnceMigrations;
import dev.once.test.TestDatabase;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

/** {@code core schema}: Once's migrations as a deployment step, on a real PostgreSQL. */
class CoreSchemaIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(2);

    final String schema = "once_deploy_" + UUID.randomUUID().toString().substring(0, 8);

    @AfterEach
    void drop() {
        new JdbcTemplate(db.dataSource()).execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }

    static CoreRun core(String... args) {
        return CoreRun.of(CoreRun.connectedTo(db, args));
    }

    @Test
    void status_names_what_a_new_schema_lacks_and_migrate_applies_it_once() {
        CoreRun before = core("schema", "status", "--schema", schema, "--json", "--fail-on-findings");
        assertThat(before.exit()).as(before.err()).isEqualTo(Core.FINDINGS);
        assertThat(before.json()).containsEntry("current", null).containsEntry("pending", List.of(
                Map.of("version", "1", "description", "baseline", "script", "V1__baseline.sql")));

        CoreRun migrated = core("schema", "migrate", "--schema", schema, "--json");
        assertThat(migrated.exit()).as(migrated.err()).isZero();
        assertThat(migrated.json()).containsEntry("to", "1").containsEntry("applied", List.of(
                Map.of("version", "1", "description", "baseline", "script", "V1__baseline.sql")));
        assertThat(new JdbcTemplate(db.dataSource()).queryForObject(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name IN "
                        + "('idempotency_record', 'outbox_event', 'once_handler_claim')", Long.class, schema))
                .isEqualTo(3);

        CoreRun after = core("schema", "status", "--schema", schema, "--json", "--fail-on-findings");
        assertThat(after.exit()).as(after.err()).isZero();
        assertThat(after.json()).containsEntry("current", "1").containsEntry("pending", List.of());
        CoreRun again = core("schema", "migrate", "--schema", schema);
        assertThat(again.exit()).isZero();
        assertThat(again.out()).contains("from", "to").doesNotContain("V1__baseline.sql");
    }

    @Test
    void a_schema_of_a_development_build_is_refused_with_the_fix_and_left_as_it_is() {
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        jdbc.execute("CREATE SCHEMA " + schema);
        jdbc.execute("CREATE TABLE " + schema + "." + OnceMigrations.HISTORY_TABLE + " (script text)");
        jdbc.update("INSERT INTO " + schema + "." + OnceMigrations.HISTORY_TABLE + " VALUES (?)",
                OnceMigrations.PRE_RELEASE_FIRST_SCRIPT);

        CoreRun migrate = core("schema", "migrate", "--schema", schema);

        assertThat(migrate.exit()).isEqualTo(Core.UNREACHABLE);
        assertThat(migrate.errLines()).singleElement().asString().startsWith("core: Schema " + schema)
                .contains("drop Once's tables");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM information_schema.tables WHERE table_schema = ?",
                Long.class, schema)).as("nothing created").isOne();
    }

    @Test
    void a_schema_name_that_is_not_a_plain_postgresql_name_is_a_usage_error() {
        CoreRun run = core("schema", "migrate", "--schema", "x; DROP TABLE y");

        assertThat(run.exit()).isEqualTo(Core.USAGE);
        assertThat(run.errLines()).singleElement().asString().startsWith("core: --schema must be");
    }
}
