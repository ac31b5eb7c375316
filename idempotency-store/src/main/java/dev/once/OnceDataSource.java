package dev.once;

import dev.once.spi.CommitStatements;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * The application's {@link DataSource}, decorated so that the statements Once writes at the end of a transaction
 * travel with its {@code COMMIT}: outbox rows appended with {@code OutboxWriter} and the guard's completion of its
 * record are sent with the commit in one round trip instead of one round trip each (see {@link CommitStatements}).
 *
 * <p>Everything else passes through unchanged: a transaction with nothing deferred commits exactly as before, and the
 * connections are the pool's own underneath ({@code unwrap} reaches them). A deferred statement is part of the
 * transaction like any other: if it fails, the commit fails and the whole transaction rolls back; a rollback, a
 * rollback to a savepoint taken before it, or closing the connection discards it. PostgreSQL's JDBC driver runs the
 * statements and the {@code COMMIT} as one pipelined exchange.
 *
 * <p>For resource-local transactions only (Spring's JDBC or JPA transaction managers), which commit through
 * {@code Connection.commit}; a JTA transaction commits through its XA resources, and statements deferred in it would be
 * dropped (with an error logged when the connection closes). If a deferred statement fails, the transaction is rolled
 * back before the commit's exception is thrown, whatever the driver's {@code autosave} setting.
 *
 * <p>Spring Boot applications get it from Once's autoconfiguration ({@code once.idempotency.pipelined-commit}, on by
 * default, and never with a {@code JtaTransactionManager}); otherwise wrap the pool once and use the wrapper
 * everywhere, transaction manager included. Thread-safe.
 */
public final class OnceDataSource extends DelegatingDataSource {

    public OnceDataSource(DataSource target) {
        super(target);
        if (target instanceof OnceDataSource) {
            throw new IllegalArgumentException("target is already a OnceDataSource");
        }
    }

    @Override
    public Connection getConnection() throws SQLException {
        return CommitStatements.pipelined(super.getConnection());
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return CommitStatements.pipelined(super.getConnection(username, password));
    }

}
