package dev.once.idempotency;

/**
 * Proof of a claim: the record and the fencing token it was claimed under. Every transition presents it, and the store
 * applies the transition only while the record is still {@code processing} under the same fencing token, so a slow
 * claimant whose lease lapsed and whose record was reclaimed can never overwrite the new owner's result.
 */
public record ClaimToken(IdempotencyScope scope, long recordId, long fencingToken) {

    @Override
    public String toString() {
        return "ClaimToken[" + scope + " record=" + recordId + " fence=" + fencingToken + "]";
    }
}
