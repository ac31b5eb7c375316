package dev.once.guard;

import dev.once.idempotency.IdempotencyScope;

/**
 * One guarded request: the scope its key is bound to and the fingerprint of its content
 * ({@link dev.once.idempotency.RequestFingerprint}).
 */
public record MutationRequest(IdempotencyScope scope, String requestHash) {

    public MutationRequest {
        if (scope == null || requestHash == null || requestHash.isEmpty()) {
            throw new IllegalArgumentException("scope and requestHash are required");
        }
    }

    public static MutationRequest of(IdempotencyScope scope, String requestHash) {
        return new MutationRequest(scope, requestHash);
    }
}
