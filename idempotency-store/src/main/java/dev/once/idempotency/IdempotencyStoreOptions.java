package dev.once.idempotency;

/**
 * Store-wide options: the response size limit and what happens above it. Immutable; start from
 * {@link #ofDefaults()} and change it with the {@code with…} methods.
 */
public record IdempotencyStoreOptions(int maxResponseBodyBytes, OversizedResponse oversizedResponse) {

    public IdempotencyStoreOptions {
        if (maxResponseBodyBytes < 0) {
            throw new IllegalArgumentException("maxResponseBodyBytes must not be negative, was " + maxResponseBodyBytes);
        }
        if (oversizedResponse == null) {
            throw new IllegalArgumentException("oversizedResponse is required");
        }
    }

    public static IdempotencyStoreOptions ofDefaults() {
        return new IdempotencyStoreOptions(IdempotencyDefaults.MAX_RESPONSE_BODY_BYTES, IdempotencyDefaults.OVERSIZED_RESPONSE);
    }

    public IdempotencyStoreOptions withMaxResponseBodyBytes(int bytes) {
        return new IdempotencyStoreOptions(bytes, oversizedResponse);
    }

    public IdempotencyStoreOptions withOversizedResponse(OversizedResponse behaviour) {
        return new IdempotencyStoreOptions(maxResponseBodyBytes, behaviour);
    }

    /**
     * {@code response} as it may be stored: itself when its body is within {@link #maxResponseBodyBytes}, else without
     * its body ({@link OversizedResponse#OMIT_BODY}) or refused ({@link ResponseTooLargeException}).
     */
    StoredResponse limit(StoredResponse response) {
        if (response.bodyLength() <= maxResponseBodyBytes) {
            return response;
        }
        if (oversizedResponse == OversizedResponse.REJECT) {
            throw new ResponseTooLargeException(response.bodyLength(), maxResponseBodyBytes);
        }
        return new StoredResponse(response.statusCode(), response.contentType(), response.headers(), null, true);
    }
}
