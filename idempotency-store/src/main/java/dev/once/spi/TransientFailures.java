package dev.once.spi;

import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.Set;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.RecoverableDataAccessException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.transaction.TransactionSystemException;

/**
 * Tells infrastructure failures that pass (the database restarting, a connection cut, a pool exhausted, a
 * serialization failure or deadlock) from failures of the work itself. Once never records a transient failure as the
 * outcome of a request or an event: the guard answers 503 and frees the key, the dispatcher retries the record
 * instead of dead-lettering it. Recognised by type and SQLState along the cause chain, never by message.
 */
public final class TransientFailures {

    /** SQLState classes and codes that say "try again": connection exceptions, shutdown, resources, concurrency. */
    private static final Set<String> TRANSIENT_STATES = Set.of("57P01", "57P02", "57P03", "53300", "40001", "40P01");

    private TransientFailures() {
    }

    public static boolean isTransient(Throwable failure) {
        boolean transactionControl = false;
        Throwable current = failure;
        for (int depth = 0; current != null && depth < 32; depth++, current = current.getCause()) {
            // A commit or rollback that failed on the connection: the connection broke under the transaction (when a
            // rollback fails, Spring throws that failure in place of the original, transient one).
            transactionControl |= current instanceof TransactionSystemException || isHibernateTransactionException(current);
            if (transactionControl && current instanceof SQLException) {
                return true;
            }
            if (current instanceof SQLTransientException || current instanceof SQLRecoverableException
                    || current instanceof TransientDataAccessException || current instanceof RecoverableDataAccessException
                    || current instanceof DataAccessResourceFailureException
                    || current instanceof CannotCreateTransactionException) {
                return true;
            }
            if (current instanceof SQLException sql && sql.getSQLState() != null
                    && (sql.getSQLState().startsWith("08") || TRANSIENT_STATES.contains(sql.getSQLState()))) {
                return true;
            }
        }
        return false;
    }

    /**
     * The deepest cause's message, with its SQLState when PostgreSQL gave one: what an operator can act on, without
     * the statement a wrapping exception repeats.
     */
    public static String describe(Throwable failure) {
        Throwable deepest = failure;
        String sqlState = null;
        int depth = 0;
        for (Throwable t = failure; t != null && depth++ < 32; t = t.getCause()) {
            if (t instanceof SQLException sql && sql.getSQLState() != null) {
                sqlState = sql.getSQLState();
            }
            if (t.getMessage() != null) {
                deepest = t;
            }
        }
        String message = deepest.getMessage() == null ? deepest.getClass().getName() : deepest.getMessage();
        return message + (sqlState == null ? "" : " (SQLState " + sqlState + ")");
    }

    /** {@code org.hibernate.TransactionException}, recognised by type name so that Hibernate stays optional. */
    private static boolean isHibernateTransactionException(Throwable failure) {
        for (Class<?> type = failure.getClass(); type != null; type = type.getSuperclass()) {
            if (type.getName().equals("org.hibernate.TransactionException")) {
                return true;
            }
        }
        return false;
    }
}
