package dev.once;

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

/**
 * The connection of an {@link OnceDataSource}: it keeps the statements {@link CommitStatements#defer deferred} in the
 * current transaction and sends them with {@code COMMIT} as one multi-statement prepared statement, which PostgreSQL's
 * driver pipelines in one round trip (Parse/Bind/Execute for each, one Sync). After that exchange the server is idle,
 * so the driver's own {@code commit()} that follows sends nothing; the pool still sees its usual commit call.
 * Confined to the thread using the connection, as connections are.
 */
final class PipelinedConnection implements InvocationHandler {

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
                } else {
                    rolledBackTo((Savepoint) args[0]);
                }
                break;
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
            case "abort":
                discard();
                break;
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
        }
        target.commit(); // the server committed already; this keeps the pool's and the driver's state in step
    }

    private void rolledBackTo(Savepoint savepoint) {
        Integer mark = savepoints.get(savepoint);
        if (mark != null && mark < deferred.size()) {
            deferred.subList(mark, deferred.size()).clear();
        }
        savepoints.values().removeIf(m -> m > deferred.size());
    }

    private void discard() {
        deferred.clear();
        savepoints.clear();
    }
}
