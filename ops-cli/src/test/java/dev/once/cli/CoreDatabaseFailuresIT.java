package dev.once.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.idempotency.OnceMigrations;
import dev.once.test.TestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The core command against databases it can reach but that cannot serve it: a schema without Once's tables, tables of
 * another shape, a session the server ends mid-command. Always one line and exit code 3; never a stack trace, never
 * the password.
 */
class CoreDatabaseFailuresIT {

    /** A schema nobody migrated. */
    @RegisterExtension
    static final TestDatabase empty = TestDatabase.create().poolSize(1);

    /** A schema with tables of Once's names and other columns. */
    @RegisterExtension
    static final TestDatabase foreign = TestDatabase.create().poolSize(1);

    @RegisterExtension
    static final TestDatabase migrated = TestDatabase.create().poolSize(2);

    static final String EVENT = "0190a8c2-7b3e-7c1a-9f2e-3b4c5d6e7f80";
    static final String[] SCOPE = {"--tenant-id", "acme", "--user-id", "alice", "--route", "POST /accounts",
            "--idempotency-key", "k-1"};

    @BeforeAll
    static void schemas() {
        JdbcTemplate jdbc = new JdbcTemplate(foreign.dataSource());
        jdbc.execute("CREATE TABLE idempotency_record (id bigint)");
        jdbc.execute("CREATE TABLE outbox_event (id uuid)");
        OnceMigrations.migrate(migrated.dataSource());
    }

    static Stream<Arguments> everyCommand() {
        return Stream.of(
                Arguments.of("idempotency_record", command("idempotency diagnose", SCOPE)),
                Arguments.of("idempotency_record", command("idempotency expire")),
                Arguments.of("idempotency_record", command("idempotency expire --yes")),
                Arguments.of("idempotency_record", command("idempotency stuck")),
                // an operator action writes its audit row first, so that is the table it misses first
                Arguments.of("once_operator_audit", command("idempotency release --yes", SCOPE)),
                Arguments.of("idempotency_record", command("idempotency purge --older-than 7d --yes")),
                Arguments.of("outbox_event", command("outbox status")),
                Arguments.of("once_operator_audit", command("outbox redrive --yes --event-id " + EVENT)),
                Arguments.of("once_handler_claim", command("dispatch failed")),
                Arguments.of("once_operator_audit",
                        command("dispatch retry --yes --handler-key projection --event-id " + EVENT)),
                Arguments.of("once_operator_audit", command("dispatch parked retry --yes")),
                Arguments.of("once_operator_audit", command("audit")));
    }

    static List<String> command(String words, String... more) {
        List<String> all = new ArrayList<>(List.of(words.split(" ")));
        all.addAll(List.of(more));
        return all;
    }

    @ParameterizedTest(name = "core {1}")
    @MethodSource("everyCommand")
    void a_database_without_once_tables_is_one_line_that_says_so_and_exit_code_3(String table, List<String> command) {
        CoreRun run = CoreRun.of(CoreRun.connectedTo(empty, command.toArray(String[]::new)));

        assertThat(run.exit()).as(run.err()).isEqualTo(Core.UNREACHABLE);
        assertThat(run.errLines()).as(run.err()).hasSize(1);
        assertThat(run.err()).startsWith("core: the database at " + empty.jdbcUrl() + " has no Once tables (")
                .contains(table).contains("once.idempotency.migrate=true").contains("Flyway migrations");
        assertOneCleanLine(run);
        assertThat(run.out()).isEmpty();
    }

    @Test
    void a_password_in_the_jdbc_url_is_masked_in_every_message() {
        String password = empty.server().password();
        CoreRun missingTables = CoreRun.of("idempotency", "stuck",
                "--jdbc-url", empty.jdbcUrl() + "&password=" + password, "--db-user", empty.server().username());
        CoreRun unreachable = CoreRun.of("idempotency", "stuck", "--jdbc-url",
                "jdbc:postgresql://127.0.0.1:1/nowhere?user=ops&password=s3cret-pw&ssl=false", "--db-user", "ops");

        assertThat(missingTables.exit()).as(missingTables.err()).isEqualTo(Core.UNREACHABLE);
        assertThat(missingTables.err()).contains("has no Once tables").contains("&password=***")
                .doesNotContain("password=" + password);
        assertThat(unreachable.exit()).isEqualTo(Core.UNREACHABLE);
        assertThat(unreachable.err()).contains("cannot reach the database").contains("password=***&ssl=false")
                .doesNotContain("s3cret-pw");
    }

    @Test
    void a_wrong_password_is_never_printed() {
        CoreRun run = CoreRun.of("outbox", "status",
                "--jdbc-url", empty.jdbcUrl(), "--db-user", empty.server().username(), "--db-password", "wr0ng-s3cret-pw");

        // Exit 3 whether the server checks passwords (it refuses the login) or trusts local logins (no Once tables).
        assertThat(run.exit()).as(run.err()).isEqualTo(Core.UNREACHABLE);
        assertOneCleanLine(run);
        assertThat(run.err()).doesNotContain("wr0ng-s3cret-pw");
    }

    @Test
    void tables_of_another_shape_are_one_line_with_the_sqlstate_and_exit_code_3() {
        CoreRun run = CoreRun.of(CoreRun.connectedTo(foreign, "outbox", "status"));

        assertThat(run.exit()).as(run.err()).isEqualTo(Core.UNREACHABLE);
        assertThat(run.err()).startsWith("core: the database at " + foreign.jdbcUrl() + " could not run the command: ")
                .contains("(SQLState 42703)");
        assertOneCleanLine(run);
    }

    @Test
    void a_session_the_server_ends_mid_command_is_one_line_and_exit_code_3() throws Exception {
        String application = "core-it-" + UUID.randomUUID();
        JdbcTemplate jdbc = new JdbcTemplate(migrated.dataSource());
        CoreRun run;
        try (Connection locker = migrated.dataSource().getConnection(); Statement lock = locker.createStatement()) {
            // core's first read of outbox_event waits behind this lock until its session is terminated.
            locker.setAutoCommit(false);
            lock.execute("LOCK TABLE outbox_event IN ACCESS EXCLUSIVE MODE");
            CompletableFuture<CoreRun> waiting = CompletableFuture.supplyAsync(() -> CoreRun.of("outbox", "status",
                    "--jdbc-url", migrated.jdbcUrl() + "&ApplicationName=" + application,
                    "--db-user", migrated.server().username(), "--db-password", migrated.server().password()));
            await().atMost(Duration.ofSeconds(20)).until(() -> jdbc.queryForObject("""
                    SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                    WHERE application_name = ? AND wait_event_type = 'Lock'
                    """, Integer.class, application) > 0);
            run = waiting.get(20, TimeUnit.SECONDS);
            locker.rollback();
        }

        assertThat(run.exit()).as(run.err()).isEqualTo(Core.UNREACHABLE);
        assertThat(run.err()).startsWith("core: lost the connection to the database at ").contains("(SQLState 57P01)");
        assertOneCleanLine(run);
    }

    private static void assertOneCleanLine(CoreRun run) {
        assertThat(run.errLines()).as(run.err()).hasSize(1);
        assertThat(run.err()).doesNotContain("\tat ").doesNotContain("Exception");
    }
}
