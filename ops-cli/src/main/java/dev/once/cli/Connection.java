package dev.once.cli;

import java.sql.SQLException;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * How every command reaches PostgreSQL: {@code --jdbc-url}, {@code --db-user}, {@code --db-password}, or the
 * environment variables {@code ONCE_JDBC_URL}, {@code ONCE_DB_USER}, {@code ONCE_DB_PASSWORD}. The password is never
 * printed. One connection, opened once, so that start-up stays fast.
 */
final class Connection {

    /** A {@code password=} parameter of the JDBC URL, which PostgreSQL's driver accepts in place of the flag. */
    private static final Pattern URL_PASSWORD = Pattern.compile("(?i)([?&;]password=)[^&;]*");

    @Option(names = "--jdbc-url", defaultValue = "${env:ONCE_JDBC_URL}",
            description = "JDBC URL of the database (env ONCE_JDBC_URL), e.g. jdbc:postgresql://localhost:5432/app")
    String jdbcUrl;

    @Option(names = "--db-user", defaultValue = "${env:ONCE_DB_USER}", description = "Database user (env ONCE_DB_USER)")
    String user;

    @Option(names = "--db-password", defaultValue = "${env:ONCE_DB_PASSWORD}", arity = "0..1", interactive = false,
            description = "Database password (env ONCE_DB_PASSWORD); never printed")
    String password;

    private SingleConnectionDataSource opened;

    /** The connection settings of {@code command}, for messages about its database; empty ones if it has none. */
    static Connection of(CommandSpec command) {
        return command.mixins().values().stream().map(CommandSpec::userObject).filter(Connection.class::isInstance)
                .map(Connection.class::cast).findFirst().orElseGet(Connection::new);
    }

    /** A DataSource on one connection, checked now: an unreachable database is exit code 3. */
    DataSource open() {
        if (jdbcUrl == null || jdbcUrl.isBlank()) {
            throw new IllegalArgumentException("--jdbc-url (or ONCE_JDBC_URL) is required");
        }
        opened = new SingleConnectionDataSource(jdbcUrl, user, password, true);
        try (java.sql.Connection c = opened.getConnection()) {
            c.isValid(5);
        } catch (SQLException e) {
            throw new DatabaseUnreachableException("cannot reach the database at " + safeUrl() + " as "
                    + (user == null ? "(default user)" : user) + ": " + DatabaseFailures.reason(e), e);
        }
        return opened;
    }

    /** Closes the connection if one was opened: the process's exit would, but the tests run many commands in one. */
    void close() {
        if (opened != null) {
            opened.destroy();
            opened = null;
        }
    }

    /** The JDBC URL as messages may show it: a password in it is masked. */
    String safeUrl() {
        return jdbcUrl == null ? "(no --jdbc-url)" : URL_PASSWORD.matcher(jdbcUrl).replaceAll("$1***");
    }
}
