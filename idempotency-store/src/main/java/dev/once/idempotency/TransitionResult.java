package dev.once.idempotency;

/** Whether a transition presented with a {@link ClaimToken} took effect. */
public enum TransitionResult {

    /** The record was updated. */
    APPLIED,

    /** Nothing changed: the token no longer owns a processing record (reclaimed by a newer claim, or completed). */
    STALE;

    public boolean applied() {
        return this == APPLIED;
    }

    /** Returns normally when applied; otherwise throws {@link StaleClaimException} naming {@code token}. */
    public void orThrow(ClaimToken token) {
        if (this != APPLIED) {
            throw new StaleClaimException(token);
        }
    }
}
