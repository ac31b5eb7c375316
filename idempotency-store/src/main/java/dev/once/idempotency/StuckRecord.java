package dev.once.idempotency;

import java.time.Duration;
import java.time.Instant;

/**
 * A processing record that looks stuck: its lease lapsed, or it has been processing longer than the threshold asked
 * about. Ages are by the database clock.
 *
 * @param attempts how many times the record was claimed (its fencing token)
 */
public record StuckRecord(long recordId, IdempotencyScope scope, Instant claimedAt, Instant lockedUntil, Duration age,
                          long attempts, boolean leaseLapsed) {
}
