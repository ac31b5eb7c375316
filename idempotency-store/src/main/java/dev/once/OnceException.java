package dev.once;

/**
 * The root of every exception Once throws. Unchecked: the conditions it reports are programming or configuration
 * errors, or infrastructure failures. Expected races and outcomes (claimed, replay, in progress, conflict) are never
 * exceptions; they are values of {@link dev.once.idempotency.ClaimResult}.
 */
public class OnceException extends RuntimeException {

    public OnceException(String message) {
        super(message);
    }

    public OnceException(String message, Throwable cause) {
        super(message, cause);
    }
}
