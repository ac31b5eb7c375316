package dev.once.idempotency;

import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

/**
 * The outcome of {@link IdempotencyStore#claim}: exactly one of five values. Races and duplicates are outcomes,
 * not exceptions.
 */
public sealed interface ClaimResult {

    /** The caller owns the record and must run the work, then complete it with its {@link #token()}. */
    record Claimed(ClaimToken token, Kind kind) implements ClaimResult {

        /** Why the record could be claimed. */
        public enum Kind {
            /** No record existed. */
            FRESH,
            /** A processing record whose lease had lapsed, for the same request. */
            LEASE_RECLAIMED,
            /** A record past its TTL (or released), reused by a new request. */
            EXPIRED_REUSED,
            /** A failed record, retried because the policy allows it. */
            FAILED_RETRY
        }
    }

    /** The request already succeeded: replay its response and bindings; do not run the work again. */
    record Replay(StoredResponse response, String taskId, UUID outboxEventId) implements ClaimResult {
    }

    /**
     * The same request is being processed under a live lease.
     *
     * @param retryAfter time until the lease lapses, by the database clock; never negative
     */
    record InProgress(Instant lockedUntil, Duration retryAfter) implements ClaimResult {
    }

    /** The key was used with a different request (request hash): IDEMPOTENCY_KEY_CONFLICT. */
    record Conflict(String storedRequestHash) implements ClaimResult {
    }

    /** The request failed before and the policy does not allow retrying it: replay the stored failure. */
    record Failed(StoredResponse response) implements ClaimResult {
    }
}
