package dev.once.audit;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntSupplier;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/** {@link OperatorAudit} over JDBC: one insert before the effect, one update of its count after it. */
final class JdbcOperatorAudit implements OperatorAudit {

    static final String BEGIN = """
            INSERT INTO once_operator_audit (operator, via, action, target, reason)
            VALUES (?, ?, ?, CAST(? AS jsonb), ?)
            RETURNING id
            """;

    /** The one update the table allows: the action's own count, from NULL. */
    static final String AFFECTED = """
            UPDATE once_operator_audit SET affected = ? WHERE id = ? AND affected IS NULL
            """;

    static final String RECENT = """
            SELECT id, at, operator, via, action, CAST(target AS text) AS target, reason, affected
            FROM once_operator_audit
            ORDER BY id DESC
            LIMIT ?
            """;

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final JdbcTemplate jdbc;
    private final TransactionTemplate transactions;

    JdbcOperatorAudit(DataSource dataSource) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
    }

    @Override
    public int record(Operator by, String action, Map<String, ?> target, IntSupplier effect) {
        Integer affected = transactions.execute(status -> {
            Long id = jdbc.queryForObject(BEGIN, Long.class, by.name(), by.via(), action, json(target), by.reason());
            int n = effect.getAsInt();
            jdbc.update(AFFECTED, n, id);
            return n;
        });
        return affected == null ? 0 : affected;
    }

    @Override
    public List<Entry> recent(int limit) {
        return jdbc.query(RECENT, (rs, n) -> new Entry(rs.getLong("id"), rs.getTimestamp("at").toInstant(),
                rs.getString("operator"), rs.getString("via"), rs.getString("action"),
                JSON.readValue(rs.getString("target"), new TypeReference<Map<String, Object>>() { }),
                rs.getString("reason"), rs.getLong("affected")), limit);
    }

    /** The target as JSON, criteria left out ({@code null}) dropped, durations as ISO-8601. */
    static String json(Map<String, ?> target) {
        Map<String, Object> kept = new LinkedHashMap<>();
        target.forEach((k, v) -> {
            if (v != null) {
                kept.put(k, v instanceof Duration || v instanceof java.util.UUID ? v.toString() : v);
            }
        });
        return JSON.writeValueAsString(kept);
    }
}
