package dev.once.spi;

import dev.once.OnceDataSource;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Statements deferred to the commit of the current transaction, on a connection of an {@link OnceDataSource}: they
 * run in the order deferred, right before {@code COMMIT} and in the same round trip. Used by Once's own modules for
 * writes nothing in the transaction reads back (outbox rows, a record's completion); applications need not call it.
 *
 * <p>A deferred statement that must refuse the commit raises an error (for instance the completion of a stale claim,
 * SQLState {@code OC001}); the commit then throws it and the transaction rolls back.
 */
public final class CommitStatements {

    /** Binds one deferred statement's parameters from index {@code first} on; returns the next free index. */
    @FunctionalInterface
    public interface Binder {
        int bind(PreparedStatement statement, int first) throws SQLException;
    }

    private CommitStatements() {
    }

    /**
     * {@code connection} as an {@link OnceDataSource} hands it out: statements {@link #defer deferred} on it are sent
     * with its {@code COMMIT}, in the same round trip.
     */
    public static Connection pipelined(Connection connection) {
        return (Connection) Proxy.newProxyInstance(CommitStatements.class.getClassLoader(),
                new Class<?>[] {Connection.class}, new PipelinedConnection(connection));
    }

    /** Whether {@link #defer(Connection, String, Binder)} would defer on this connection. */
    public static boolean deferrable(Connection connection) throws SQLException {
        return connection.isWrapperFor(PipelinedConnection.class) && !connection.getAutoCommit();
    }

    /** {@link #deferrable(Connection)} for the connection {@code jdbc} uses in the current transaction. */
    public static boolean deferrable(JdbcTemplate jdbc) {
        return Boolean.TRUE.equals(jdbc.execute((ConnectionCallback<Boolean>) CommitStatements::deferrable));
    }

    /**
     * Defers {@code sql} (one statement, without a trailing semicolon) to the commit of the transaction
     * {@code connection} is in.
     *
     * @return {@code false}, deferring nothing, when the connection is not an {@link OnceDataSource}'s or is in
     *         auto-commit mode: the caller then runs the statement at once
     */
    public static boolean defer(Connection connection, String sql, Binder binder) throws SQLException {
        if (!deferrable(connection)) {
            return false;
        }
        connection.unwrap(PipelinedConnection.class).defer(sql, binder);
        return true;
    }

    /** {@link #defer(Connection, String, Binder)} on the connection {@code jdbc} uses in the current transaction. */
    public static boolean defer(JdbcTemplate jdbc, String sql, Binder binder) {
        return Boolean.TRUE.equals(jdbc.execute((ConnectionCallback<Boolean>) c -> defer(c, sql, binder)));
    }
}
