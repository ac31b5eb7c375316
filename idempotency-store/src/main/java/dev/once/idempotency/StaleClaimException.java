package dev.once.idempotency;

import dev.once.OnceException;

/**
 * A transition attempted with a claim token that no longer owns its record: the lease lapsed and another request
 * reclaimed it, or the record already left {@code processing}. Raised only by {@link TransitionResult#orThrow}.
 */
public class StaleClaimException extends OnceException {

    private final ClaimToken token;

    public StaleClaimException(ClaimToken token) {
        super("Claim " + token + " is stale: the record was reclaimed or already completed; its result was not stored");
        this.token = token;
    }

    public ClaimToken token() {
        return token;
    }
}
