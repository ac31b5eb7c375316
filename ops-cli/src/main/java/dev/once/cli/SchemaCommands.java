package dev.once.cli;

import dev.once.OnceConfigurationException;
import dev.once.idempotency.OnceMigrations;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationInfoService;
import org.flywaydb.core.api.output.MigrateOutput;
import org.flywaydb.core.api.output.MigrateResult;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code core schema}: Once's migrations as a deployment step (UPGRADING.md). {@code status} says which of the
 * migrations this core holds the database lacks; {@code migrate} applies them, as {@code OnceMigrations.migrate} does.
 * Flyway's history table ({@code once_schema_history}) records each applied migration with the database user and
 * time, so it is the audit of this command.
 */
@Command(name = "schema", description = "Once's tables: the migrations they lack, and applying them before a deploy.",
        subcommands = {SchemaCommands.Status.class, SchemaCommands.Migrate.class})
final class SchemaCommands {

    /** The schema's name as PostgreSQL spells it unquoted: what {@code --schema} accepts. */
    static final String SCHEMA_NAME = "[a-z_][a-z0-9_$]{0,62}";

    static String checked(String schema) {
        if (schema != null && !schema.matches(SCHEMA_NAME)) {
            throw new IllegalArgumentException("--schema must be a lower-case PostgreSQL name (" + SCHEMA_NAME
                    + "), not '" + schema + "'");
        }
        return schema;
    }

    /** A development build's schema, which no migration continues: the database cannot serve the command (3). */
    static RuntimeException refused(OnceConfigurationException e) {
        return new DatabaseUnreachableException(e.getMessage(), e);
    }

    @Command(name = "status", description = "The version Once's tables are at and the migrations they lack.")
    static final class Status implements Callable<Integer> {
        @Mixin Connection connection;
        @Spec CommandSpec spec;

        @Option(names = "--schema", description = "The schema of Once's tables (default: the connection's current one)")
        String schema;

        @Option(names = "--json", description = "Print JSON")
        boolean json;

        @Option(names = "--fail-on-findings", description = "Exit 1 when migrations are pending")
        boolean failOnFindings;

        @Override
        public Integer call() {
            MigrationInfoService info;
            try {
                info = OnceMigrations.info(connection.open(), checked(schema));
            } catch (OnceConfigurationException e) {
                throw refused(e);
            }
            MigrationInfo current = info.current();
            List<Map<String, Object>> pending = java.util.Arrays.stream(info.pending()).map(m -> migration(
                    m.getVersion().getVersion(), m.getDescription(), m.getScript())).toList();
            Map<String, Object> status = new LinkedHashMap<>();
            status.put("current", current == null ? null : current.getVersion().getVersion());
            status.put("pending", pending);
            print(spec.commandLine().getOut(), json, status, pending);
            return failOnFindings && !pending.isEmpty() ? Core.FINDINGS : 0;
        }
    }

    @Command(name = "migrate", description = "Apply the migrations Once's tables lack (UPGRADING.md: run it before the "
            + "first instance of a new version starts, with once.idempotency.migrate=false on the instances).")
    static final class Migrate implements Callable<Integer> {
        @Mixin Connection connection;
        @Spec CommandSpec spec;

        @Option(names = "--schema", description = "The schema of Once's tables, created if need be (default: the "
                + "connection's current one)")
        String schema;

        @Option(names = "--json", description = "Print JSON")
        boolean json;

        @Override
        public Integer call() {
            MigrateResult result;
            try {
                result = schema == null ? OnceMigrations.migrate(connection.open())
                        : OnceMigrations.migrate(connection.open(), checked(schema));
            } catch (OnceConfigurationException e) {
                throw refused(e);
            }
            List<Map<String, Object>> applied = result.migrations.stream()
                    .map((MigrateOutput m) -> migration(m.version, m.description, m.filepath)).toList();
            Map<String, Object> outcome = new LinkedHashMap<>();
            outcome.put("from", result.initialSchemaVersion);
            outcome.put("to", result.targetSchemaVersion == null ? result.initialSchemaVersion
                    : result.targetSchemaVersion);
            outcome.put("applied", applied);
            print(spec.commandLine().getOut(), json, outcome, applied);
            return 0;
        }
    }

    static Map<String, Object> migration(String version, String description, String script) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("version", version);
        m.put("description", description);
        m.put("script", script == null ? null : script.substring(script.lastIndexOf('/') + 1));
        return m;
    }

    static void print(PrintWriter out, boolean json, Map<String, Object> fields, List<Map<String, Object>> migrations) {
        if (json) {
            Output.json(out, fields);
            return;
        }
        Map<String, Object> scalars = new LinkedHashMap<>(fields);
        scalars.values().removeIf(List.class::isInstance);
        scalars.replaceAll((k, v) -> v == null ? "none" : v);
        Output.fields(out, scalars);
        if (!migrations.isEmpty()) {
            Output.table(out, List.of("VERSION", "DESCRIPTION", "SCRIPT"), migrations.stream()
                    .map(m -> List.of(String.valueOf(m.get("version")), String.valueOf(m.get("description")),
                            String.valueOf(m.get("script")))).toList());
        }
    }
}
