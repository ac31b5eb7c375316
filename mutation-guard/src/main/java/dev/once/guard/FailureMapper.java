package dev.once.guard;

import dev.once.idempotency.StoredResponse;

/**
 * Turns an exception thrown by a handler into the error response that is returned now and stored for replay. The
 * HTTP layer maps Spring's {@code ErrorResponse} and {@code @ResponseStatus}; this default answers 500.
 */
@FunctionalInterface
public interface FailureMapper {

    FailureMapper INTERNAL_ERROR = failure -> Problems.response(500, "Internal Server Error",
            "The request failed; repeating it with the same Idempotency-Key returns this response", "INTERNAL_ERROR");

    StoredResponse toResponse(Throwable failure);
}
