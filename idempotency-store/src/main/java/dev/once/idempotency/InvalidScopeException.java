package dev.once.idempotency;

import dev.once.OnceException;

/** A tenant id, user id or route that cannot scope an idempotency record; the message names the field. */
public class InvalidScopeException extends OnceException {

    private final String field;

    public InvalidScopeException(String field, String message) {
        super(message);
        this.field = field;
    }

    /** The offending field: {@code tenant_id}, {@code user_id} or {@code route}. */
    public String field() {
        return field;
    }
}
