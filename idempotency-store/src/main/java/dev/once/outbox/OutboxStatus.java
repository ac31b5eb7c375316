package dev.once.outbox;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The outbox as operators see it: pending rows, the oldest pending row's age, parked rows with their reasons, and in
 * CDC mode the replication slot's activity and lag. Every figure is read from PostgreSQL when asked; thread-safe.
 */
public final class OutboxStatus {

    static final String PENDING = "SELECT count(*) FROM outbox_event WHERE published_at IS NULL AND parked_at IS NULL";

    static final String OLDEST_PENDING_AGE = """
            SELECT CAST(EXTRACT(EPOCH FROM now() - created_at) * 1000 AS bigint) FROM outbox_event
            WHERE published_at IS NULL AND parked_at IS NULL ORDER BY seq LIMIT 1
            """;

    static final String PARKED_COUNT = "SELECT count(*) FROM outbox_event WHERE parked_at IS NOT NULL";

    static final String PARKED = """
            SELECT id, aggregate_type, aggregate_id, event_type, park_reason, parked_at FROM outbox_event
            WHERE parked_at IS NOT NULL ORDER BY seq LIMIT ?
            """;

    static final String SLOT = """
            SELECT active, CAST(pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn) AS bigint) AS lag_bytes
            FROM pg_replication_slots WHERE slot_name = ?
            """;

    /** A parked event and why it was parked. */
    public record Parked(UUID id, String aggregateType, String aggregateId, String eventType, String reason,
                         java.time.Instant parkedAt) {
    }

    /** A replication slot's state: whether a relay streams from it, and how many WAL bytes it has not confirmed. */
    public record Slot(String name, boolean active, long lagBytes) {
    }

    private final JdbcTemplate jdbc;

    public OutboxStatus(DataSource dataSource) {
        this.jdbc = new JdbcTemplate(dataSource);
    }

    public long pending() {
        Long n = jdbc.queryForObject(PENDING, Long.class);
        return n == null ? 0 : n;
    }

    /** The age of the oldest pending row, or zero when nothing is pending. */
    public Duration oldestPendingAge() {
        List<Long> age = jdbc.queryForList(OLDEST_PENDING_AGE, Long.class);
        return age.isEmpty() || age.get(0) == null ? Duration.ZERO : Duration.ofMillis(Math.max(0, age.get(0)));
    }

    public long parkedCount() {
        Long n = jdbc.queryForObject(PARKED_COUNT, Long.class);
        return n == null ? 0 : n;
    }

    public List<Parked> parked(int limit) {
        return jdbc.query(PARKED, (rs, n) -> new Parked(rs.getObject("id", UUID.class), rs.getString("aggregate_type"),
                rs.getString("aggregate_id"), rs.getString("event_type"), rs.getString("park_reason"),
                rs.getObject("parked_at", java.time.OffsetDateTime.class).toInstant()), limit);
    }

    /** The slot, or {@code null} when it does not exist (yet). */
    public Slot slot(String slotName) {
        List<Slot> slots = jdbc.query(SLOT, (rs, n) -> new Slot(slotName, rs.getBoolean("active"), rs.getLong("lag_bytes")),
                slotName);
        return slots.isEmpty() ? null : slots.get(0);
    }
}
