package dev.once.outbox;

import dev.once.audit.Operator;
import dev.once.audit.OperatorAudit;
import dev.once.spi.SlotWatermarks;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;

/** {@link OutboxOperations} over JDBC. */
final class JdbcOutboxOperations implements OutboxOperations {

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

    static final String SLOTS = "SELECT DISTINCT slot_name FROM once_relay_watermark ORDER BY slot_name";

    /**
     * The slot, and its lag in time from the watermarks ({@link SlotWatermarks}): the age of the newest one it has
     * confirmed, or of the oldest while it has confirmed none.
     */
    static final String SLOT = """
            SELECT s.database, s.database = current_database() AS here, s.active, s.wal_status,
                   COALESCE(CAST(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), s.confirmed_flush_lsn) AS bigint), 0)
                       AS lag_bytes,
                   CAST(EXTRACT(EPOCH FROM now() - COALESCE(
                       (SELECT taken_at FROM once_relay_watermark
                        WHERE slot_name = s.slot_name AND confirmed_at IS NOT NULL ORDER BY lsn DESC LIMIT 1),
                       (SELECT min(taken_at) FROM once_relay_watermark WHERE slot_name = s.slot_name))) * 1000 AS bigint)
                       AS lag_ms
            FROM pg_replication_slots s WHERE s.slot_name = ? AND s.slot_type = 'logical'
            """;

    static final String REDRIVE = """
            WITH parked AS (
                SELECT aggregate_type, aggregate_id, seq FROM outbox_event WHERE id = ? AND parked_at IS NOT NULL
            ), moved AS (
                DELETE FROM outbox_event e USING parked p
                WHERE e.aggregate_type = p.aggregate_type AND e.aggregate_id = p.aggregate_id
                  AND e.seq >= p.seq AND e.published_at IS NULL
                RETURNING e.*
            )
            INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version,
                                      payload, content_type, headers, created_at)
            SELECT id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version, payload,
                   content_type, headers, created_at
            FROM moved ORDER BY seq
            """;

    private final JdbcTemplate jdbc;
    private final OperatorAudit audit;

    JdbcOutboxOperations(DataSource dataSource) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.audit = OperatorAudit.create(dataSource);
    }

    @Override
    public long pending() {
        Long n = jdbc.queryForObject(PENDING, Long.class);
        return n == null ? 0 : n;
    }

    @Override
    public Duration oldestPendingAge() {
        List<Long> age = jdbc.queryForList(OLDEST_PENDING_AGE, Long.class);
        return age.isEmpty() || age.get(0) == null ? Duration.ZERO : Duration.ofMillis(Math.max(0, age.get(0)));
    }

    @Override
    public long parkedCount() {
        Long n = jdbc.queryForObject(PARKED_COUNT, Long.class);
        return n == null ? 0 : n;
    }

    @Override
    public List<Parked> parked(int limit) {
        return jdbc.query(PARKED, (rs, n) -> new Parked(rs.getObject("id", UUID.class), rs.getString("aggregate_type"),
                rs.getString("aggregate_id"), rs.getString("event_type"), rs.getString("park_reason"),
                rs.getObject("parked_at", OffsetDateTime.class).toInstant()), limit);
    }

    @Override
    public List<String> slots() {
        return jdbc.queryForList(SLOTS, String.class);
    }

    @Override
    public Slot slot(String slotName) {
        List<Slot> slots = jdbc.query(SLOT, (rs, n) -> {
            long lagMillis = rs.getLong("lag_ms");
            Duration lag = rs.wasNull() ? null : Duration.ofMillis(Math.max(0, lagMillis));
            Slot.State state = !rs.getBoolean("here") ? Slot.State.OTHER_DATABASE
                    : "lost".equals(rs.getString("wal_status")) ? Slot.State.LOST
                    : rs.getBoolean("active") ? Slot.State.STREAMING : Slot.State.INACTIVE;
            return new Slot(slotName, state, rs.getString("database"), rs.getString("wal_status"),
                    rs.getLong("lag_bytes"), lag);
        }, slotName);
        return slots.isEmpty() ? new Slot(slotName, Slot.State.MISSING, null, null, 0, null) : slots.get(0);
    }

    @Override
    public int redrive(UUID eventId, Operator by) {
        return audit.record(by, "outbox.redrive", java.util.Map.of("event_id", eventId.toString()),
                () -> jdbc.update(REDRIVE, eventId));
    }
}
