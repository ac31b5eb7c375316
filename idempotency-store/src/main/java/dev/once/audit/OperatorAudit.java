package dev.once.audit;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.IntSupplier;
import javax.sql.DataSource;

/**
 * The append-only record of what operators did ({@code once_operator_audit}): every action of the operator API
 * ({@code ParkedEvents}, {@code HandlerClaims}, {@code IdempotencyOperations}, {@code OutboxOperations}) writes its
 * row first, in the same transaction as its effect, with the number of rows the effect took. A rolled-back action
 * leaves no row, and a committed one cannot lose its row; the table refuses updates and deletes. Thread-safe.
 */
public interface OperatorAudit {

    /** The audit trail in {@code dataSource}, whose schema {@code OnceMigrations.migrate} has created. */
    static OperatorAudit create(DataSource dataSource) {
        return new JdbcOperatorAudit(dataSource);
    }

    /**
     * Runs {@code effect} as operator action {@code action} on {@code target} (a filter or a key, kept as JSON): the
     * audit row first, then the effect, then the row's count, in one transaction (joined when one is active on the
     * same {@code DataSource}). Returns what {@code effect} returned: how many rows it affected.
     */
    int record(Operator by, String action, Map<String, ?> target, IntSupplier effect);

    /** The newest {@code limit} entries, newest first. */
    List<Entry> recent(int limit);

    /** One operator action; {@code target} as it was recorded. */
    record Entry(long id, Instant at, String operator, String via, String action, Map<String, Object> target,
                 String reason, long affected) {

        /** Its fields by their JSON names, in order: what {@code core audit} and the console print. */
        public Map<String, Object> toMap() {
            Map<String, Object> m = new java.util.LinkedHashMap<>();
            m.put("id", id);
            m.put("at", at.toString());
            m.put("operator", operator);
            m.put("via", via);
            m.put("action", action);
            m.put("target", target);
            m.put("affected", affected);
            m.put("reason", reason);
            return m;
        }
    }
}
