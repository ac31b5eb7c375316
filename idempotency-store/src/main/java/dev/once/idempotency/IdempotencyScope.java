package dev.once.idempotency;

import static dev.once.idempotency.IdempotencyDefaults.MAX_SCOPE_PART_LENGTH;

/**
 * What an idempotency key is bound to: tenant, user, route and the key itself. Two requests share a record only when
 * all four are equal, so a key can never replay another tenant's or user's response. Tenant and user must come from
 * the authenticated principal, never from a client-supplied header. Immutable.
 */
public record IdempotencyScope(String tenantId, String userId, Route route, IdempotencyKey key) {

    public IdempotencyScope {
        requireScopePart("tenant_id", tenantId);
        requireScopePart("user_id", userId);
        if (route == null) {
            throw new InvalidScopeException("route", "route is missing");
        }
        if (key == null) {
            throw new IdempotencyKeyException(IdempotencyKeyException.Problem.MISSING, "Idempotency key is missing");
        }
    }

    /** The scope of {@code key}, validated: see {@link IdempotencyKey} and {@link Route}. */
    public static IdempotencyScope of(String tenantId, String userId, Route route, String key) {
        return new IdempotencyScope(tenantId, userId, route, IdempotencyKey.of(key));
    }

    private static void requireScopePart(String field, String value) {
        if (value == null || value.isEmpty()) {
            throw new InvalidScopeException(field, field + " is missing");
        }
        if (value.length() > MAX_SCOPE_PART_LENGTH) {
            throw new InvalidScopeException(field, field + " is " + value.length() + " characters long; at most "
                    + MAX_SCOPE_PART_LENGTH + " are allowed");
        }
        for (int i = 0; i < value.length(); i++) {
            if (Character.isISOControl(value.charAt(i))) {
                throw new InvalidScopeException(field, field + " contains a control character at index " + i);
            }
        }
    }

    @Override
    public String toString() {
        return tenantId + "/" + userId + "/" + route + "/" + key;
    }
}
