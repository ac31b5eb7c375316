package dev.once.guard;

import dev.once.idempotency.StoredResponse;
import java.sql.SQLException;

/**
 * Failures caused by what the request carried rather than by the service: the database refused one of the work's
 * writes with a data exception (SQLState class 22: a value too long, out of range, not valid for its type,
 * untranslatable) or an integrity constraint violation (class 23: not null, foreign key, unique, check). The work rolled
 * back, nothing took effect, and the same request can only meet the same refusal or, for a constraint, succeed once
 * the data it conflicts with changed. So it is answered as the client's error (400 or 409 problem+json) and never
 * stored: the claim is released, and the key may be used again. Recognised by SQLState along the cause chain (and the
 * chain of next exceptions of a batch), never by message; and so is a {@link dev.once.idempotency.RequestBodyException}
 * raised while the work read the body.
 */
final class RequestContentFailures {

    static final String DATA_REJECTED = "REQUEST_DATA_REJECTED";
    static final String CONSTRAINT_VIOLATED = "REQUEST_CONSTRAINT_VIOLATED";

    private RequestContentFailures() {
    }

    /** The answer to {@code failure} when the request's content caused it, or {@code null} when it did not. */
    static StoredResponse response(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof dev.once.idempotency.RequestBodyException body) {
                // a body the work's own reading refused (a functional route decodes inside the guard)
                return Problems.response(400, "Bad Request", body.getMessage(), body.problem().code());
            }
        }
        String state = sqlState(failure);
        if (state == null) {
            return null;
        }
        return state.startsWith("22")
                ? Problems.response(400, "Bad Request", "The database refused a value of this request as invalid for "
                        + "its field; nothing was done. Correct the request; the Idempotency-Key may be used again.",
                        DATA_REJECTED)
                : Problems.response(409, "Conflict", "The request conflicts with data the service holds (an integrity "
                        + "constraint refused it); nothing was done. The Idempotency-Key may be used again.",
                        CONSTRAINT_VIOLATED);
    }

    /** The SQLState of class 22 or 23 found along the cause chain, or {@code null}. */
    private static String sqlState(Throwable failure) {
        Throwable current = failure;
        for (int depth = 0; current != null && depth < 32; depth++, current = current.getCause()) {
            if (current instanceof SQLException sql) {
                for (SQLException next = sql; next != null && depth < 32; next = next.getNextException(), depth++) {
                    String state = next.getSQLState();
                    if (state != null && (state.startsWith("22") || state.startsWith("23"))) {
                        return state;
                    }
                }
            }
        }
        return null;
    }
}
