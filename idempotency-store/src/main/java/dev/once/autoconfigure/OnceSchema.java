package dev.once.autoconfigure;

import dev.once.idempotency.OnceMigrations;
import javax.sql.DataSource;

/**
 * Marks that Once's tables exist: created by running {@link OnceMigrations} at startup (unless
 * {@code once.idempotency.migrate=false}, when the application migrates them itself). Beans that use the tables
 * depend on it.
 */
public final class OnceSchema {

    OnceSchema(DataSource dataSource, boolean migrate) {
        if (migrate) {
            OnceMigrations.migrate(dataSource);
        }
    }
}
