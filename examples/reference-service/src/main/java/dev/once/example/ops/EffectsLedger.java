package dev.once.example.ops;

import dev.once.example.files.FileStorage;
import dev.once.outbox.OutboxStatus;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * The effects ledger: for each handler, how many effects it produced and for how many distinct events, and how many
 * committed events it has not handled yet; plus the outbox backlog and the business rows. Exactly once means
 * {@code effects == distinct_events} (nothing done twice) and, once the system is quiet,
 * {@code events_unhandled == 0} (nothing lost). Events are counted from {@code outbox_event}, which keeps published
 * rows for {@code once.outbox.relay.retention}.
 */
@Component
public class EffectsLedger {

    /** A handler, the event type it handles and where its effects are recorded. */
    record Ledger(String handler, String eventType, String mode, String effectsTable, String effectsFilter) {
    }

    static final List<Ledger> LEDGERS = List.of(
            new Ledger("account-projection", "AccountCreated", "TRANSACTIONAL", "handler_effect",
                    "handler_key = 'account-projection'"),
            new Ledger("welcome-email", "AccountCreated", "LEASED", "outbound_email", "true"),
            new Ledger("task-runner", "TaskSubmitted", "TRANSACTIONAL", "handler_effect", "handler_key = 'task-runner'"));

    static final String EFFECTS = """
            SELECT count(*) AS effects, count(DISTINCT event_id) AS distinct_events FROM %s WHERE %s
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

    private final JdbcTemplate jdbc;
    private final OutboxStatus outbox;
    private final FileStorage storage;

    EffectsLedger(DataSource dataSource, FileStorage storage) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.outbox = new OutboxStatus(dataSource);
        this.storage = storage;
    }

    /** The ledger as {@code GET /ops/effects} shows it (snake_case keys, stable order). */
    public Map<String, Object> snapshot() {
        List<Map<String, Object>> handlers = LEDGERS.stream().map(this::handler).toList();
        Map<String, Object> resources = new LinkedHashMap<>(jdbc.queryForMap(RESOURCES));
        resources.put("files_on_disk", storage.count());
        Map<String, Object> snapshot = new LinkedHashMap<>();
        snapshot.put("handlers", handlers);
        snapshot.put("outbox", Map.of("pending", outbox.pending(), "parked", outbox.parkedCount()));
        snapshot.put("resources", resources);
        return snapshot;
    }

    private Map<String, Object> handler(Ledger ledger) {
        Map<String, Object> effects = jdbc.queryForMap(EFFECTS.formatted(ledger.effectsTable(), ledger.effectsFilter()));
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
        row.put("events_committed", ((Number) events.get("committed")).longValue());
        row.put("events_unhandled", ((Number) events.get("unhandled")).longValue());
        return row;
    }
}
