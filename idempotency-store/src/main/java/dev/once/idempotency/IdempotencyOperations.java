package dev.once.idempotency;

import dev.once.audit.Operator;
import java.time.Duration;
import java.util.List;
import java.util.function.LongConsumer;
import javax.sql.DataSource;

/**
 * What operators do with idempotency records: diagnose a key, find stuck records, force-release one, and the sweeps
 * (expire, purge). Apart from {@link IdempotencyStore}, which the request path uses. Every decision is made by
 * PostgreSQL against its own clock. The sweeps run their own short transactions and refuse to run inside one.
 * Thread-safe.
 */
public interface IdempotencyOperations {

    /** The operations over {@code dataSource}, whose schema {@link OnceMigrations#migrate} has created. */
    static IdempotencyOperations create(DataSource dataSource) {
        return new JdbcIdempotencyOperations(dataSource);
    }

    /**
     * An operator's release of one stuck processing record, so that a retry can claim it at once: the record expires,
     * its lease is cleared and its fencing token moves on, so the old claimant can no longer complete it. A record
     * whose lease is still live is refused unless {@code evenIfLeaseLive}. Runs in its own transaction, recorded in
     * the {@link dev.once.audit.OperatorAudit operator audit}.
     */
    ReleaseResult forceRelease(IdempotencyScope scope, boolean evenIfLeaseLive, Operator by);

    /** What the store knows about {@code scope}; {@code requestHash} may be {@code null} to skip the conflict check. */
    Diagnosis diagnose(IdempotencyScope scope, String requestHash);

    /** How many records are past their TTL and not yet marked {@code expired}. Changes nothing. */
    long countExpirable();

    /**
     * Marks records past {@code expires_at} as {@code expired} and clears {@code locked_until}, in batches of
     * {@code batchSize}, one short transaction each; never touches a record whose lease is live.
     */
    default SweepResult expire(int batchSize) {
        return expire(batchSize, rows -> { });
    }

    /** As {@link #expire(int)}, calling {@code progress} with the running total after every batch. */
    SweepResult expire(int batchSize, LongConsumer progress);

    /** Deletes {@code expired} records whose {@code expires_at} is older than {@code olderThan}, in batches. */
    default SweepResult purge(Duration olderThan, int batchSize) {
        return purge(olderThan, batchSize, rows -> { });
    }

    /** As {@link #purge(Duration, int)}, calling {@code progress} with the running total after every batch. */
    SweepResult purge(Duration olderThan, int batchSize, LongConsumer progress);

    /** Processing records whose lease lapsed or that were claimed longer ago than {@code olderThan}, oldest first. */
    default List<StuckRecord> findStuck(Duration olderThan) {
        return findStuck(olderThan, null, 1_000);
    }

    /** As {@link #findStuck(Duration)}, for one tenant ({@code null} for all) and at most {@code limit} records. */
    List<StuckRecord> findStuck(Duration olderThan, String tenantId, int limit);
}
