package dev.once.idempotency;

import dev.once.OnceException;

/**
 * An Idempotency-Key that is not 1–255 visible ASCII characters. {@link #problem()} names what is wrong; the message
 * also says where.
 */
public class IdempotencyKeyException extends OnceException {

    /** What is wrong with a rejected key. */
    public enum Problem { MISSING, EMPTY, TOO_LONG, CONTROL_CHARACTER, WHITESPACE, NON_ASCII, MALFORMED }

    private final Problem problem;

    public IdempotencyKeyException(Problem problem, String message) {
        super(message);
        this.problem = problem;
    }

    public Problem problem() {
        return problem;
    }
}
