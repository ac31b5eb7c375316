package dev.once.cli;

import java.sql.SQLException;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import picocli.CommandLine.Option;

/**
 * How every command reaches PostgreSQL: {@code --jdbc-url}, {@code --db-user}, {@code --db-password}, or the
 * environment variables {@code ONCE_JDBC_URL}, {@code ONCE_DB_USER}, {@code ONCE_DB_PASSWORD}. The password is never
 * printed. One connection, opened once, so that start-up stays fast.
 */
final class Connection {

    @Option(names = "--jdbc-url", defaultValue = "${env:ONCE_JDBC_URL}",
            description = "JDBC URL of the database (env ONCE_JDBC_URL), e.g. jdbc:postgresql://localhost:5432/app")
    String jdbcUrl;

    @Option(names = "--db-user", defaultValue = "${env:ONCE_DB_USER}", description = "Database user (env ONCE_DB_USER)")
    String user;

    @Option(names = "--db-password", defaultValue = "${env:ONCE_DB_PASSWORD}", arity = "0..1", interactive = false,
            description = "Database password (env ONCE_DB_PASSWORD); never printed")
    String password;

    /** A DataSource on one connection, checked now: an unreachable database is exit code 3. */
    DataSource open() {
        if (jdbcUrl == null || jdbcUrl.isBlank()) {
            throw new IllegalArgumentException("--jdbc-url (or ONCE_JDBC_URL) is required");
        }
        SingleConnectionDataSource dataSource = new SingleConnectionDataSource(jdbcUrl, user, password, true);
        try (java.sql.Connection c = dataSource.getConnection()) {
            c.isValid(5);
        } catch (SQLException e) {
            throw new DatabaseUnreachableException("cannot reach the database at " + jdbcUrl + " as "
                    + (user == null ? "(default user)" : user) + ": " + e.getMessage(), e);
        }
        return dataSource;
    }
}
