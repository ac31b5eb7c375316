package dev.once.idempotency;

import java.time.Duration;
import java.util.List;
import java.util.function.LongConsumer;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The operator's maintenance work: expire, purge and find stuck records. Sweeps work in bounded batches, each its own
 * short transaction that locks only its batch ({@code FOR UPDATE SKIP LOCKED}), so they never hold a long table lock,
 * never wait on a busy row, and several instances may sweep at once without doing the same work twice.
 */
final class Sweeps {

    static final String COUNT_EXPIRABLE = """
            SELECT count(*) FROM idempotency_record
            WHERE status <> 'expired' AND expires_at <= statement_timestamp() AND (status <> 'processing' OR locked_until <= statement_timestamp())
            """;

    static final String EXPIRE_BATCH = """
            WITH batch AS (
                SELECT id FROM idempotency_record
                WHERE status <> 'expired' AND expires_at <= statement_timestamp() AND (status <> 'processing' OR locked_until <= statement_timestamp())
                ORDER BY expires_at
                LIMIT ?
                FOR UPDATE SKIP LOCKED
            )
            UPDATE idempotency_record r SET status = 'expired', locked_until = NULL, updated_at = statement_timestamp()
            FROM batch WHERE r.id = batch.id
            """;

    static final String PURGE_BATCH = """
            DELETE FROM idempotency_record WHERE id IN (
                SELECT id FROM idempotency_record
                WHERE status = 'expired' AND expires_at <= statement_timestamp() - CAST(? AS bigint) * interval '1 millisecond'
                ORDER BY expires_at
                LIMIT ?
                FOR UPDATE SKIP LOCKED
            )
            """;

    static final String FIND_STUCK = """
            SELECT id, tenant_id, user_id, route, idempotency_key, claimed_at, locked_until, fencing_token,
                   CAST(EXTRACT(EPOCH FROM (statement_timestamp() - claimed_at)) * 1000 AS bigint) AS age_ms,
                   locked_until <= statement_timestamp() AS lease_lapsed
            FROM idempotency_record
            WHERE status = 'processing'
              AND (locked_until <= statement_timestamp() OR claimed_at <= statement_timestamp() - CAST(? AS bigint) * interval '1 millisecond')
              AND (CAST(? AS text) IS NULL OR tenant_id = CAST(? AS text))
            ORDER BY claimed_at
            LIMIT ?
            """;

    private final JdbcTemplate jdbc;

    Sweeps(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    long countExpirable() {
        Long count = jdbc.queryForObject(COUNT_EXPIRABLE, Long.class);
        return count == null ? 0 : count;
    }

    SweepResult expire(int batchSize, LongConsumer progress) {
        return sweep(batchSize, progress, () -> jdbc.update(EXPIRE_BATCH, batchSize));
    }

    SweepResult purge(Duration olderThan, int batchSize, LongConsumer progress) {
        if (olderThan == null || olderThan.isNegative()) {
            throw new IllegalArgumentException("olderThan must be zero or positive, was " + olderThan);
        }
        return sweep(batchSize, progress, () -> jdbc.update(PURGE_BATCH, olderThan.toMillis(), batchSize));
    }

    private static SweepResult sweep(int batchSize, LongConsumer progress, java.util.function.IntSupplier batch) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be at least 1, was " + batchSize);
        }
        if (TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new IllegalStateException("Sweeps run their own short transactions; call them outside a transaction");
        }
        long total = 0;
        int batches = 0;
        int rows;
        do {
            rows = batch.getAsInt();
            batches++;
            total += rows;
            progress.accept(total);
        } while (rows == batchSize);
        return new SweepResult(total, batches);
    }

    List<StuckRecord> findStuck(Duration olderThan, String tenantId, int limit) {
        return jdbc.query(FIND_STUCK, (rs, n) -> new StuckRecord(rs.getLong("id"), RecordColumns.scope(rs),
                        RecordColumns.instant(rs, "claimed_at"), RecordColumns.instant(rs, "locked_until"),
                        Duration.ofMillis(rs.getLong("age_ms")), rs.getLong("fencing_token"), rs.getBoolean("lease_lapsed")),
                olderThan.toMillis(), tenantId, tenantId, limit);
    }
}
