package dev.once.idempotency;

import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * Creates and upgrades Once's tables with Flyway, from migrations shipped in this jar. Once keeps its own location
 * and history table, so its migrations live beside an application's own without either seeing the other's.
 */
public final class OnceMigrations {

    /** Where Once's migrations live on the classpath. */
    public static final String LOCATION = "classpath:db/once/idempotency";

    /** Once's own Flyway history table. */
    public static final String HISTORY_TABLE = "once_schema_history";

    private OnceMigrations() {
    }

    /** Migrates the connection's current schema (the first entry of its search_path). */
    public static MigrateResult migrate(DataSource dataSource) {
        return configure(dataSource).load().migrate();
    }

    /** Migrates {@code schema}, creating it if need be. */
    public static MigrateResult migrate(DataSource dataSource, String schema) {
        return configure(dataSource).schemas(schema).load().migrate();
    }

    private static org.flywaydb.core.api.configuration.FluentConfiguration configure(DataSource dataSource) {
        return Flyway.configure()
                .dataSource(dataSource)
                .locations(LOCATION)
                .table(HISTORY_TABLE)
                // An application's schema is rarely empty; baseline below our first version so V1 still runs.
                .baselineOnMigrate(true)
                .baselineVersion("0");
    }
}
