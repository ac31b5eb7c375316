package dev.once.idempotency;

/**
 * What the store does with a response whose body is larger than the configured limit.
 */
public enum OversizedResponse {

    /**
     * Refuse to store it: {@code markSucceeded}/{@code markFailed} throw {@link ResponseTooLargeException} inside the
     * caller's transaction, which therefore rolls back. Nothing is half-written; the work did not take effect.
     */
    REJECT,

    /**
     * Store status code and headers but not the body, and flag the record. A replay then returns the original status
     * and headers with an empty body, and {@link StoredResponse#bodyOmitted()} is {@code true}.
     */
    OMIT_BODY
}
