package dev.once.idempotency;

import dev.once.OnceException;

/**
 * A response body over the store's limit, refused under {@link OversizedResponse#REJECT}. Thrown inside the caller's
 * transaction, so the work that produced the response rolls back with it.
 */
public class ResponseTooLargeException extends OnceException {

    private final int size;
    private final int limit;

    public ResponseTooLargeException(int size, int limit) {
        super("Response body of " + size + " bytes exceeds the idempotency store's limit of " + limit
                + " bytes (once.idempotency.max-response-body-bytes); raise the limit or choose OMIT_BODY");
        this.size = size;
        this.limit = limit;
    }

    public int size() {
        return size;
    }

    public int limit() {
        return limit;
    }
}
