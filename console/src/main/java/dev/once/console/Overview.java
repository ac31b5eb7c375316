package dev.once.console;

import dev.once.idempotency.HandlerClaims;
import dev.once.idempotency.IdempotencyOperations;
import dev.once.idempotency.ParkedEvents;
import dev.once.outbox.OutboxOperations;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The console's first page, and {@code /actuator/once}: the relay's backlog and slot, each consumer group's parked
 * events, each handler's claims, the stuck HTTP records. Every figure is read from PostgreSQL when asked, through the
 * same operator API as {@code core}. Holds no payload and no secret. Thread-safe.
 */
final class Overview {

    private final OutboxOperations outbox;
    private final ParkedEvents parked;
    private final HandlerClaims claims;
    private final IdempotencyOperations records;
    private final Duration stuckAfter;
    private final Duration maxSlotLag;

    public Overview(DataSource dataSource, Duration stuckAfter, Duration maxSlotLag) {
        this.outbox = OutboxOperations.create(dataSource);
        this.parked = ParkedEvents.create(dataSource);
        this.claims = HandlerClaims.create(dataSource);
        this.records = IdempotencyOperations.create(dataSource);
        this.stuckAfter = stuckAfter;
        this.maxSlotLag = maxSlotLag;
    }

    /** The overview as JSON fields, stable names in snake case. */
    public Map<String, Object> read() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("outbox", outbox());
        out.put("consumer_groups", parked.summary().stream().map(g -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("group", g.groupId());
            m.put("held", g.held());
            m.put("failing", g.failing());
            m.put("failed", g.failed());
            m.put("behind", g.behind());
            m.put("keys", g.keys());
            return m;
        }).toList());
        out.put("handlers", claims.retention(null).stream().map(h -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("route", h.route());
            m.put("handler_key", h.handlerKey());
            m.put("claims", h.claims());
            m.put("processing", h.processing());
            m.put("failed", h.failed());
            return m;
        }).toList());
        Map<String, Object> http = new LinkedHashMap<>();
        http.put("stuck_after_seconds", stuckAfter.toSeconds());
        http.put("stuck", records.findStuck(stuckAfter, null, 1_000).size());
        out.put("http_records", http);
        return out;
    }

    private Map<String, Object> outbox() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("pending", outbox.pending());
        m.put("oldest_pending_age_seconds", outbox.oldestPendingAge().toSeconds());
        m.put("parked_rows", outbox.parkedCount());
        List<String> slots = outbox.slots();
        m.put("relay_mode", slots.isEmpty() ? "polling" : "wal");
        if (!slots.isEmpty()) {
            OutboxOperations.Slot slot = outbox.slot(slots.get(0));
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("name", slot.name());
            s.put("state", slot.state().name().toLowerCase());
            s.put("wal_status", slot.walStatus());
            s.put("lag_bytes", slot.lagBytes());
            s.put("lag_seconds", slot.lag() == null ? null : slot.lag().toSeconds());
            s.put("problem", slot.problem(maxSlotLag));
            m.put("slot", s);
        }
        return m;
    }
}
