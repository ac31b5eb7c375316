package dev.once.example.ops;

import dev.once.example.files.FileStorage;
import dev.once.outbox.OutboxOperations;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.stereotype.Component;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The effects ledger: for each handler, how many effects it produced and for how many distinct events, and how many
 * committed events it has not handled yet; plus the outbox backlog and the business rows. Exactly once means
 * {@code effects == distinct_events} (nothing done twice) and, once the system is quiet,
 * {@code events_unhandled == 0} (nothing lost). Events are counted from {@code outbox_event}, which keeps published
 * rows for {@code once.outbox.relay.retention}.
 */
@Component
public class EffectsLedger {

    /**
     * A handler, the event type it handles and where its effects are recorded. {@code effect} says what counts as
     * one effect: a row for the TRANSACTIONAL handlers; for the LEASED welcome email, a distinct derived key, since
     * the mail service deduplicates on it (a re-send after a crash, with the same key, is an attempt it absorbs).
     */
    record Ledger(String handler, String eventType, String mode, String effectsTable, String effectsFilter,
                  String effect) {
    }

    static final List<Ledger> LEDGERS = List.of(
            new Ledger("account-projection", "AccountCreated", "TRANSACTIONAL", "handler_effect",
                    "handler_key = 'account-projection'", "count(*)"),
            new Ledger("welcome-email", "AccountCreated", "LEASED", "outbound_email", "true",
                    "count(DISTINCT derived_key)"),
            new Ledger("task-runner", "TaskSubmitted", "TRANSACTIONAL", "handler_effect", "handler_key = 'task-runner'",
                    "count(*)"));

    static final String EFFECTS = """
            SELECT %s AS effects, count(DISTINCT event_id) AS distinct_events, count(*) AS attempts FROM %s WHERE %s
            """;
    static final String EVENTS = """
            SELECT count(*) AS committed,
                   count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM %s e WHERE %s AND e.event_id = o.id)) AS unhandled
              FROM outbox_event o
             WHERE o.event_type = ?
            """;
    static final String RESOURCES = """
            SELECT (SELECT count(*) FROM account) AS accounts,
                   (SELECT count(*) FROM stored_file) AS files,
                   (SELECT count(*) FROM stored_file WHERE state = 'completed') AS files_completed,
                   (SELECT count(*) FROM task) AS tasks,
                   (SELECT count(*) FROM task WHERE state = 'done') AS tasks_done,
                   (SELECT count(*) FROM idempotency_record WHERE status = 'processing') AS records_processing
            """;
    /**
     * Half-written work, which must never exist: events whose business row is missing, and business rows (younger
     * than the outbox retention) without the event that announces them.
     */
    static final String HALF_WRITTEN = """
            SELECT (SELECT count(*) FROM outbox_event o
                     WHERE (o.aggregate_type = 'account' AND NOT EXISTS (SELECT 1 FROM account a WHERE a.id::text = o.aggregate_id))
                        OR (o.aggregate_type = 'file' AND NOT EXISTS (SELECT 1 FROM stored_file f WHERE f.id::text = o.aggregate_id))
                        OR (o.aggregate_type = 'task' AND NOT EXISTS (SELECT 1 FROM task t WHERE t.id = o.aggregate_id)))
                       AS orphan_events,
                   (SELECT count(*) FROM account a WHERE a.created_at > statement_timestamp() - interval '6 days'
                       AND NOT EXISTS (SELECT 1 FROM outbox_event o WHERE o.aggregate_type = 'account'
                                          AND o.aggregate_id = a.id::text AND o.event_type = 'AccountCreated'))
                 + (SELECT count(*) FROM task t WHERE t.submitted_at > statement_timestamp() - interval '6 days'
                       AND NOT EXISTS (SELECT 1 FROM outbox_event o WHERE o.aggregate_type = 'task'
                                          AND o.aggregate_id = t.id AND o.event_type = 'TaskSubmitted'))
                       AS rows_without_event
            """;

    private final JdbcTemplate jdbc;
    private final OutboxOperations outbox;
    private final FileStorage storage;
    /** One snapshot for all the ledger's queries: counted apart, a handler working meanwhile would tear them. */
    private final TransactionTemplate oneSnapshot;

    EffectsLedger(DataSource dataSource, FileStorage storage) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.outbox = OutboxOperations.create(dataSource);
        this.storage = storage;
        this.oneSnapshot = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        oneSnapshot.setReadOnly(true);
        oneSnapshot.setIsolationLevel(TransactionDefinition.ISOLATION_REPEATABLE_READ);
    }

    /**
     * The ledger as {@code GET /ops/effects} shows it (snake_case keys, stable order), its counts from one snapshot
     * of the database (the files on disk are counted beside it).
     */
    public Map<String, Object> snapshot() {
        return oneSnapshot.execute(status -> {
            List<Map<String, Object>> handlers = LEDGERS.stream().map(this::handler).toList();
            Map<String, Object> resources = new LinkedHashMap<>(jdbc.queryForMap(RESOURCES));
            resources.put("files_on_disk", storage.count());
            resources.putAll(jdbc.queryForMap(HALF_WRITTEN));
            Map<String, Object> snapshot = new LinkedHashMap<>();
            snapshot.put("handlers", handlers);
            snapshot.put("outbox", Map.of("pending", outbox.pending(), "parked", outbox.parkedCount()));
            snapshot.put("resources", resources);
            return snapshot;
        });
    }

    private Map<String, Object> handler(Ledger ledger) {
        Map<String, Object> effects = jdbc.queryForMap(
                EFFECTS.formatted(ledger.effect(), ledger.effectsTable(), ledger.effectsFilter()));
        Map<String, Object> events = jdbc.queryForMap(
                EVENTS.formatted(ledger.effectsTable(), ledger.effectsFilter()), ledger.eventType());
        long effectCount = ((Number) effects.get("effects")).longValue();
        long distinct = ((Number) effects.get("distinct_events")).longValue();
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("handler", ledger.handler());
        row.put("event_type", ledger.eventType());
        row.put("mode", ledger.mode());
        row.put("effects", effectCount);
        row.put("distinct_events", distinct);
        row.put("duplicate_effects", effectCount - distinct);
        row.put("absorbed_attempts", ((Number) effects.get("attempts")).longValue() - effectCount);
        row.put("events_committed", ((Number) events.get("committed")).longValue());
        row.put("events_unhandled", ((Number) events.get("unhandled")).longValue());
        return row;
    }
}
