package dev.once.cli;

import dev.once.idempotency.OnceMigrations;
import java.sql.SQLException;
import java.util.Set;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * A failure of the database under a command that had reached it, told apart by SQLState along the cause chain
 * (Spring's JdbcTemplate wraps the driver's SQLException, in BadSqlGrammarException and its kin), never by message
 * text, which PostgreSQL translates. The CLI holds no SQL, so it cannot ask whether Once's tables exist: it learns it
 * from the first operator call that fails for want of them.
 */
final class DatabaseFailures {

    /** undefined_table and invalid_schema_name: the tables (or their schema) were never created here. */
    private static final Set<String> MISSING_TABLES = Set.of("42P01", "3F000");

    /** Besides class 08: the server terminated the session (an administrator, a shutdown, a crash). */
    private static final Set<String> SESSION_ENDED = Set.of("57P01", "57P02", "57P03");

    private DatabaseFailures() {
    }

    /** The first SQLException with a SQLState along the cause chain of {@code failure}, or {@code null}. */
    static SQLException sqlCause(Throwable failure) {
        Throwable current = failure;
        for (int depth = 0; current != null && depth < 32; depth++, current = current.getCause()) {
            if (current instanceof SQLException sql && sql.getSQLState() != null) {
                return sql;
            }
        }
        return null;
    }

    /** One line for the operator: what failed at {@code url}, with PostgreSQL's reason. */
    static String describe(SQLException failure, String url) {
        String state = failure.getSQLState();
        if (MISSING_TABLES.contains(state)) {
            return "the database at " + url + " has no Once tables (" + reason(failure) + "): start the service once "
                    + "with once.idempotency.migrate=true (the default), or apply Once's Flyway migrations ("
                    + OnceMigrations.LOCATION + ")";
        }
        if (state.startsWith("08") || SESSION_ENDED.contains(state)) {
            return "lost the connection to the database at " + url + ": " + reason(failure)
                    + " (SQLState " + state + ")";
        }
        return "the database at " + url + " could not run the command: " + reason(failure)
                + " (SQLState " + state + ")";
    }

    /** The server's primary message, without the severity, position, detail and hint lines the driver appends. */
    static String reason(SQLException failure) {
        ServerErrorMessage server = failure instanceof PSQLException p ? p.getServerErrorMessage() : null;
        String message = server != null && server.getMessage() != null ? server.getMessage() : failure.getMessage();
        return message == null ? "" : message.lines().findFirst().orElse("").strip();
    }
}
