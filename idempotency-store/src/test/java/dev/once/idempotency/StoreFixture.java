package dev.once.idempotency;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.util.UUID;

/** Small helpers that keep the store's integration tests readable. */
final class StoreFixture {

    static final Route ROUTE = Route.http("POST", "/accounts");

    private StoreFixture() {
    }

    static IdempotencyScope scope(String key) {
        return IdempotencyScope.of("acme", "alice", ROUTE, key);
    }

    static IdempotencyScope freshScope() {
        return scope(UUID.randomUUID().toString());
    }

    static String hashOf(String json) {
        return RequestFingerprint.of("POST", ROUTE, "application/json", json.getBytes(UTF_8));
    }

    static StoredResponse created(String body) {
        return StoredResponse.of(201, "application/json", body).withHeader("Location", "/accounts/1");
    }
}
