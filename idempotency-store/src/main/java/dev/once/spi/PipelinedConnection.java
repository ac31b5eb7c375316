package dev.once.spi;

import dev.once.OnceDataSource;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connection of an {@link OnceDataSource}: it keeps the statements {@link CommitStatements#defer deferred} in the
 * current transaction and sends them with {@code COMMIT} as one multi-statement prepared statement, which PostgreSQL's
 * driver pipelines in one round trip (Parse/Bind/Execute for each, one Sync). After that exchange the server is idle,
 * so the driver's own {@code commit()} that follows sends nothing; the pool still sees its usual commit call.
 * Confined to the thread using the connection, as connections are.
 */
final class PipelinedConnection implements InvocationHandler {

    private static final Logger log = LoggerFactory.getLogger(PipelinedConnection.class);

    private record Deferred(String sql, CommitStatements.Binder binder) {
    }

    private final Connection target;
    private final List<Deferred> deferred = new ArrayList<>(2);
    /** How many statements were deferred when each live savepoint was set. */
    private final Map<Savepoint, Integer> savepoints = new IdentityHashMap<>();

    PipelinedConnection(Connection target) {
        this.target = target;
    }

    void defer(String sql, CommitStatements.Binder binder) {
        deferred.add(new Deferred(sql, binder));
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        switch (method.getName()) {
            case "commit":
                commit();
                return null;
            case "rollback":
                if (args == null) {
                    discard();
                    break;
                }
                call(method, args); // only once the driver rolled back do the later deferred statements go
                rolledBackTo((Savepoint) args[0]);
                return null;
            case "setSavepoint": {
                Savepoint savepoint = (Savepoint) call(method, args);
                savepoints.put(savepoint, deferred.size());
                return savepoint;
            }
            case "releaseSavepoint":
                savepoints.remove((Savepoint) args[0]);
                break;
            case "setAutoCommit":
                // switching auto-commit on commits the open transaction: the deferred statements go with it
                if ((Boolean) args[0] && !deferred.isEmpty() && !target.getAutoCommit()) {
                    commit();
                }
                break;
            case "close":
                if (!deferred.isEmpty()) {
                    // resource-local transactions commit or roll back through this connection before it is closed;
                    // one committed elsewhere (JTA, whose commit bypasses Connection.commit) would lose these
                    log.error("Connection closed with {} statement(s) deferred to a commit that never came through it;"
                            + " they are dropped. OnceDataSource needs a resource-local transaction manager, not JTA",
                            deferred.size());
                }
                discard();
                break;
            case "abort":
                break; // from another thread, on a connection being torn down: nothing of it may be touched here
            case "unwrap":
                if (((Class<?>) args[0]).isInstance(this)) {
                    return this;
                }
                if (((Class<?>) args[0]).isInstance(proxy)) {
                    return proxy;
                }
                break;
            case "isWrapperFor":
                if (((Class<?>) args[0]).isInstance(this) || ((Class<?>) args[0]).isInstance(proxy)) {
                    return true;
                }
                break;
            case "equals":
                return proxy == args[0];
            case "hashCode":
                return System.identityHashCode(proxy);
            case "toString":
                return "Once pipelined-commit connection over " + target;
            default:
                break;
        }
        return call(method, args);
    }

    private Object call(Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private void commit() throws SQLException {
        if (deferred.isEmpty()) {
            target.commit();
            return;
        }
        List<Deferred> statements = List.copyOf(deferred);
        discard();
        StringBuilder sql = new StringBuilder(256);
        for (Deferred d : statements) {
            sql.append(d.sql().strip()).append(";\n");
        }
        sql.append("COMMIT");
        try (PreparedStatement ps = target.prepareStatement(sql.toString())) {
            int next = 1;
            for (Deferred d : statements) {
                next = d.binder().bind(ps, next);
            }
            ps.execute();
        } catch (SQLException | RuntimeException e) {
            // Roll back here: a transaction manager need not, and a driver that rolled back to an automatic savepoint
            // (pgjdbc autosave) would otherwise leave the business change open to a later commit without these.
            try {
                target.rollback();
            } catch (SQLException rollback) {
                e.addSuppressed(rollback);
            }
            throw e;
        }
        target.commit(); // the server committed already; this keeps the pool's and the driver's state in step
    }

    private void rolledBackTo(Savepoint savepoint) {
        Integer mark = savepoints.get(savepoint);
        if (mark != null && mark < deferred.size()) {
            deferred.subList(mark, deferred.size()).clear();
        }
        // savepoints set after this one are released by the driver; their marks are never looked up again
    }

    private void discard() {
        deferred.clear();
        savepoints.clear();
    }
}
