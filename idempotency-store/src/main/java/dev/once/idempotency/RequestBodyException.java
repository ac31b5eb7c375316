package dev.once.idempotency;

import dev.once.OnceException;

/**
 * A request body that says it is JSON and cannot be fingerprinted exactly: it is refused before anything is claimed or
 * stored, as the client's error (HTTP 400 with {@link Problem#code()}). {@link #problem()} says what is wrong, the
 * message says where.
 */
public class RequestBodyException extends OnceException {

    /** Why a JSON body is refused; each has a stable code for problem+json answers. */
    public enum Problem {
        /** Not one JSON text (RFC 8259): a syntax error, nothing but a value's start, or more after the value. */
        MALFORMED("MALFORMED_BODY"),
        /** Not UTF-8, or a string escape that spells an unpaired surrogate (I-JSON, RFC 7493 section 2.1). */
        INVALID_UNICODE("INVALID_UNICODE"),
        /** An object with the same member name twice (I-JSON, RFC 7493 section 2.3). */
        DUPLICATE_MEMBER("DUPLICATE_MEMBER"),
        /** A number whose exponent lies beyond what {@link java.math.BigDecimal} holds, so no Java reader keeps it. */
        NUMBER_OUT_OF_RANGE("NUMBER_OUT_OF_RANGE"),
        /** Beyond the parser's limits: nesting depth, length of a number, a string or a member name. */
        TOO_COMPLEX("BODY_TOO_COMPLEX"),
        /** A string holding U+0000, which PostgreSQL stores in neither {@code text} nor {@code jsonb}. */
        UNSTORABLE_CHARACTER("UNSTORABLE_CHARACTER");

        private final String code;

        Problem(String code) {
            this.code = code;
        }

        /** The stable {@code code} of the problem+json answer. */
        public String code() {
            return code;
        }
    }

    private final Problem problem;

    public RequestBodyException(Problem problem, String message) {
        super(message);
        this.problem = problem;
    }

    public Problem problem() {
        return problem;
    }
}
