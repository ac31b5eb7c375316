package dev.once.idempotency;

/** The outcome of {@link IdempotencyOperations#forceRelease}. */
public enum ReleaseResult {
    /** The record was processing and is now released. */
    RELEASED,
    /** No record has this scope. */
    NOT_FOUND,
    /** The record is not processing (it succeeded, failed or expired): nothing to release. */
    NOT_PROCESSING,
    /** The record's lease is still live; release it anyway only if its owner is known to be gone. */
    LEASE_LIVE
}
