package dev.once.idempotency;

import dev.once.OnceException;
import java.sql.SQLException;

/**
 * A transition attempted with a claim token that no longer owns its record: the lease lapsed and another request
 * reclaimed it, or the record already left {@code processing}. Raised by {@link TransitionResult#orThrow}; a
 * completion sent with the commit ({@link IdempotencyStore#markSucceededAtCommit}) fails the commit instead, with
 * SQLState {@value #SQLSTATE}, which {@link #isCause} recognises.
 */
public class StaleClaimException extends OnceException {

    /** Raised by the database when a completion sent with the commit finds its claim stale. */
    public static final String SQLSTATE = "OC001";

    private final ClaimToken token;

    public StaleClaimException(ClaimToken token) {
        super("Claim " + token + " is stale: the record was reclaimed or already completed; its result was not stored");
        this.token = token;
    }

    public ClaimToken token() {
        return token;
    }

    /** Whether {@code failure}, for example of a commit, was caused by a stale claim's completion. */
    public static boolean isCause(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof StaleClaimException
                    || (t instanceof SQLException sql && SQLSTATE.equals(sql.getSQLState()))) {
                return true;
            }
        }
        return false;
    }
}
