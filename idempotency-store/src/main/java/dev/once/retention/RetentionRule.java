package dev.once.retention;

import java.time.Duration;
import java.util.Objects;

/**
 * What one table keeps, and so what the {@link RetentionSweeper} deletes from it: a row is due once its own time has
 * passed by the rule's period. Every rule deletes oldest first, in bounded batches, and skips rows another
 * transaction holds. Immutable.
 */
public final class RetentionRule {

    /** How long {@link #idempotencyRecords} keeps a record past its expiry. */
    public static final Duration GRACE = Duration.ofHours(1);

    /**
     * Records past their {@code expires_at} and the grace, whatever their status, unless a live lease holds them;
     * parameters: the grace in milliseconds, the batch size. Two arms, so that each is read in order from its own
     * partial index on {@code expires_at}: records never marked (the sweep marks nothing, so a record stays in the
     * first index until it is deleted) and records an operator or a release marked {@code expired}.
     */
    static final String RECORDS_DUE = """
            WITH due AS (SELECT statement_timestamp() - CAST(? AS bigint) * interval '1 millisecond' AS before,
                                CAST(? AS integer) AS size),
            unmarked AS (
                SELECT id, expires_at FROM idempotency_record
                WHERE status <> 'expired' AND expires_at <= (SELECT before FROM due)
                  AND (status <> 'processing' OR locked_until <= statement_timestamp())
                ORDER BY expires_at LIMIT (SELECT size FROM due)
                FOR UPDATE SKIP LOCKED),
            marked AS (
                SELECT id, expires_at FROM idempotency_record
                WHERE status = 'expired' AND expires_at <= (SELECT before FROM due)
                ORDER BY expires_at LIMIT (SELECT size FROM due)
                FOR UPDATE SKIP LOCKED)
            DELETE FROM idempotency_record WHERE id IN (
                SELECT id FROM (SELECT * FROM unmarked UNION ALL SELECT * FROM marked) batch
                ORDER BY expires_at LIMIT (SELECT size FROM due))
            """;

    /** How long the oldest due record has waited past {@code expires_at} and the grace, in milliseconds (0: none). */
    static final String RECORDS_OVERDUE = """
            WITH due AS (SELECT statement_timestamp() - CAST(? AS bigint) * interval '1 millisecond' AS before)
            SELECT COALESCE(CAST(EXTRACT(EPOCH FROM (SELECT before FROM due) - LEAST(
                       (SELECT min(expires_at) FROM idempotency_record
                        WHERE status <> 'expired' AND expires_at <= (SELECT before FROM due)
                          AND (status <> 'processing' OR locked_until <= statement_timestamp())),
                       (SELECT min(expires_at) FROM idempotency_record
                        WHERE status = 'expired' AND expires_at <= (SELECT before FROM due)))) * 1000 AS bigint), 0)
            """;

    /** Published outbox rows kept longer than the retention; pending and parked rows are never due. Same parameters. */
    static final String PUBLISHED_DUE = """
            DELETE FROM outbox_event WHERE id IN (
                SELECT id FROM outbox_event
                WHERE published_at IS NOT NULL AND published_at <= statement_timestamp() - CAST(? AS bigint) * interval '1 millisecond'
                ORDER BY published_at
                LIMIT ?
                FOR UPDATE SKIP LOCKED)
            """;

    static final String PUBLISHED_OVERDUE = """
            WITH due AS (SELECT statement_timestamp() - CAST(? AS bigint) * interval '1 millisecond' AS before)
            SELECT COALESCE(CAST(EXTRACT(EPOCH FROM (SELECT before FROM due) - min(published_at)) * 1000 AS bigint), 0)
            FROM outbox_event
            WHERE published_at IS NOT NULL AND published_at <= (SELECT before FROM due)
            """;

    /**
     * Undated handler claims (partition {@code once_handler_claim_undated}: events whose id is not a UUIDv7, or claimed
     * when already older than the claim retention) past their own {@code kept_until}, unless a live lease holds them.
     * Same parameters. (Dated claims go with their day's partition: {@link dev.once.idempotency.ClaimPartitions}.)
     */
    static final String UNDATED_CLAIMS_DUE = """
            DELETE FROM once_handler_claim_undated WHERE (route_id, event_id) IN (
                SELECT route_id, event_id FROM once_handler_claim_undated
                WHERE kept_until <= statement_timestamp() - CAST(? AS bigint) * interval '1 millisecond'
                  AND (status <> 1 OR locked_until <= statement_timestamp())
                ORDER BY kept_until
                LIMIT ?
                FOR UPDATE SKIP LOCKED)
            """;

    static final String UNDATED_CLAIMS_OVERDUE = """
            WITH due AS (SELECT statement_timestamp() - CAST(? AS bigint) * interval '1 millisecond' AS before)
            SELECT COALESCE(CAST(EXTRACT(EPOCH FROM (SELECT before FROM due) - min(kept_until)) * 1000 AS bigint), 0)
            FROM once_handler_claim_undated
            WHERE kept_until <= (SELECT before FROM due) AND (status <> 1 OR locked_until <= statement_timestamp())
            """;

    /**
     * How long outbox rows are kept by default ({@code once.outbox.relay.retention}): not at all. The polling relay
     * deletes a row once Kafka acknowledged it; with a relay that reads the WAL (the CDC relay, or Kafka Connect), a
     * row is deleted once the relay's replication slot has confirmed it ({@link dev.once.spi.SlotWatermarks}).
     */
    public static final Duration OUTBOX_RETENTION = Duration.ZERO;

    private final String table;
    private final String deleteDue;
    private final String overdue;
    private final Duration period;

    private RetentionRule(String table, String deleteDue, String overdue, Duration period) {
        if (period == null || period.isNegative()) {
            throw new IllegalArgumentException("the retention period of " + table + " must not be negative, was " + period);
        }
        this.table = table;
        this.deleteDue = deleteDue;
        this.overdue = overdue;
        this.period = period;
    }

    /**
     * {@code idempotency_record}: request records are deleted {@code grace} after their {@code expires_at}, which each
     * got from its own policy (the request TTL), so nothing is deleted before its own retention. Nothing is marked {@code expired} first:
     * a record past {@code expires_at} may already be claimed again, and {@code core idempotency diagnose} reports it
     * expired until the grace has passed.
     */
    public static RetentionRule idempotencyRecords(Duration grace) {
        return new RetentionRule("idempotency_record", RECORDS_DUE, RECORDS_OVERDUE, grace);
    }

    /**
     * {@code outbox_event}: rows published longer ago than {@code retention} ({@code once.outbox.relay.retention}),
     * as the polling relay marks them once Kafka acknowledged them, or {@link dev.once.spi.SlotWatermarks} once the
     * replication slot confirmed them. With a retention of zero they are deleted instead of marked, and this rule
     * removes rows a former, longer retention had kept. Pending and parked rows are never due.
     */
    public static RetentionRule publishedOutboxEvents(Duration retention) {
        return new RetentionRule("outbox_event", PUBLISHED_DUE, PUBLISHED_OVERDUE, retention);
    }

    /**
     * {@code once_handler_claim_undated}: the handler claims kept by row rather than by day, deleted once their own
     * {@code kept_until} (the claim retention after the claim) has passed.
     */
    public static RetentionRule undatedHandlerClaims() {
        return new RetentionRule("once_handler_claim_undated", UNDATED_CLAIMS_DUE, UNDATED_CLAIMS_OVERDUE, Duration.ZERO);
    }

    /** The table this rule sweeps; metrics and health are tagged with it. */
    public String table() {
        return table;
    }

    /** How long past its own time a row is kept. */
    public Duration period() {
        return period;
    }

    String deleteDue() {
        return deleteDue;
    }

    String overdue() {
        return overdue;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RetentionRule r && table.equals(r.table) && period.equals(r.period);
    }

    @Override
    public int hashCode() {
        return Objects.hash(table, period);
    }

    @Override
    public String toString() {
        return "RetentionRule[" + table + ", " + period + "]";
    }
}
