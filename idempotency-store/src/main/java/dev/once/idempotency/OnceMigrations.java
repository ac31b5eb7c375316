package dev.once.idempotency;

import dev.once.OnceConfigurationException;
import dev.once.OnceException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfoService;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * Creates and upgrades Once's tables with Flyway, from migrations shipped in this jar. Once keeps its own location
 * and history table, so its migrations live beside an application's own without either seeing the other's.
 *
 * <p>0.1.0's schema is one baseline migration ({@code V1__baseline.sql}). A schema created by a development build
 * before 0.1.0 (whose history starts with {@link #PRE_RELEASE_FIRST_SCRIPT}) is refused with a message naming the fix,
 * rather than migrated: its steps were squashed into the baseline, and nothing of them was released.
 */
public final class OnceMigrations {

    /** Where Once's migrations live on the classpath. */
    public static final String LOCATION = "classpath:db/once/idempotency";

    /** Once's own Flyway history table. */
    public static final String HISTORY_TABLE = "once_schema_history";

    /**
     * Flyway settings Once's migrations need, for whoever runs them with a Flyway of their own (a deployment step):
     * Flyway's default lock on PostgreSQL is a transaction held open for the whole run, and a later migration that
     * follows UPGRADING.md's rule ({@code CREATE INDEX CONCURRENTLY}) waits for every open transaction to end, so it
     * would wait for that one for ever. A session lock instead ({@code flyway.postgresql.transactional.lock=false}).
     */
    public static final Map<String, String> FLYWAY_SETTINGS = Map.of("flyway.postgresql.transactional.lock", "false");

    /** The first migration of the development builds before 0.1.0, which 0.1.0's baseline replaced. */
    public static final String PRE_RELEASE_FIRST_SCRIPT = "V1__idempotency_record.sql";

    /** The history table of the schema (the given one, else the connection's current one), or NULL without one. */
    static final String HISTORY = """
            SELECT COALESCE(?, current_schema()), CAST(to_regclass(quote_ident(COALESCE(?, current_schema())) || '.'
                   || quote_ident(?)) AS text)
            """;

    /** Whether a history table lists the first script of the development builds. */
    static final String PRE_RELEASE = "SELECT count(*) FROM %s WHERE script = ?";

    private OnceMigrations() {
    }

    /** Migrates the connection's current schema (the first entry of its search_path). */
    public static MigrateResult migrate(DataSource dataSource) {
        refusePreRelease(dataSource, null);
        return configure(dataSource).load().migrate();
    }

    /** Migrates {@code schema}, creating it if need be. */
    public static MigrateResult migrate(DataSource dataSource, String schema) {
        refusePreRelease(dataSource, schema);
        return configure(dataSource).schemas(schema).load().migrate();
    }

    /**
     * What {@code schema} (null: the connection's current schema) holds of Once's migrations and what it lacks, without
     * changing anything: {@code current()} is the version it is at (null before the first), {@code pending()} what
     * {@link #migrate(DataSource, String)} would apply.
     */
    public static MigrationInfoService info(DataSource dataSource, String schema) {
        refusePreRelease(dataSource, schema);
        org.flywaydb.core.api.configuration.FluentConfiguration configuration = configure(dataSource);
        return (schema == null ? configuration : configuration.schemas(schema)).load().info();
    }

    private static void refusePreRelease(DataSource dataSource, String schema) {
        try (Connection connection = dataSource.getConnection()) {
            String name;
            String history;
            try (PreparedStatement statement = connection.prepareStatement(HISTORY)) {
                statement.setString(1, schema);
                statement.setString(2, schema);
                statement.setString(3, HISTORY_TABLE);
                try (ResultSet rs = statement.executeQuery()) {
                    rs.next();
                    name = rs.getString(1);
                    history = rs.getString(2);
                }
            }
            if (history == null) {
                return;
            }
            try (PreparedStatement statement = connection.prepareStatement(PRE_RELEASE.formatted(history))) {
                statement.setString(1, PRE_RELEASE_FIRST_SCRIPT);
                try (ResultSet rs = statement.executeQuery()) {
                    if (rs.next() && rs.getLong(1) > 0) {
                        throw new OnceConfigurationException("Schema " + name + " holds Once's tables from a "
                                + "development build before 0.1.0 (" + HISTORY_TABLE + " lists "
                                + PRE_RELEASE_FIRST_SCRIPT + "), which 0.1.0's baseline migration cannot continue",
                                "Nothing before 0.1.0 was released: drop Once's tables and " + HISTORY_TABLE + " from "
                                        + name + " (or give the service a new schema) and start again, or keep the "
                                        + "build that created them (UPGRADING.md, 0.1.0)");
                    }
                }
            }
        } catch (SQLException e) {
            throw new OnceException("Could not read Once's schema history: " + e.getMessage(), e);
        }
    }

    private static org.flywaydb.core.api.configuration.FluentConfiguration configure(DataSource dataSource) {
        return Flyway.configure()
                .configuration(FLYWAY_SETTINGS)
                .dataSource(dataSource)
                .locations(LOCATION)
                .table(HISTORY_TABLE)
                // An application's schema is rarely empty; baseline below our first version so V1 still runs.
                .baselineOnMigrate(true)
                .baselineVersion("0");
    }
}
