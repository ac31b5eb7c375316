package dev.once.idempotency;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import tools.jackson.databind.json.JsonMapper;

/**
 * What the store knows about one key, as {@link IdempotencyOperations#diagnose} finds it by the database clock.
 * {@link #toJson()} is the stable, documented form that {@code core idempotency diagnose --json} prints.
 *
 * @param requestHashMatches whether the stored request hash equals the one asked about; {@code null} when none was given
 *        or no record exists
 * @param attempts how many times the record was claimed (its fencing token); {@code 0} when missing
 * @param response the stored response, for {@code replayable} and {@code failed_requires_explicit_retry}
 * @param checkedAt the database's {@code now()} the diagnosis was made at
 */
public record Diagnosis(State state, IdempotencyScope scope, IdempotencyStatus status, String storedRequestHash,
                        Boolean requestHashMatches, long attempts, StoredResponse response, String taskId,
                        UUID outboxEventId, Instant lockedUntil, Instant expiresAt, Instant createdAt, Instant updatedAt,
                        Instant checkedAt) {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** The seven diagnoses, in the order they are decided. */
    public enum State {
        /** No record: the key is free. */
        MISSING,
        /** Past its TTL or released: the next request with this key claims it afresh, whatever its body. */
        EXPIRED_REUSABLE,
        /** The stored request hash differs from the one asked about: reuse would be IDEMPOTENCY_KEY_CONFLICT. */
        REQUEST_HASH_CONFLICT,
        /** Succeeded: a repeat replays the stored response, task_id and outbox_event_id. */
        REPLAYABLE,
        /** Failed: a repeat replays the failure unless the route allows retrying failures. */
        FAILED_REQUIRES_EXPLICIT_RETRY,
        /** Processing under a live lease. */
        IN_PROGRESS,
        /** Processing, but the lease lapsed: the same request may reclaim it. */
        LEASE_EXPIRED;

        /** The snake_case name used in JSON and by the CLI. */
        public String jsonName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * The stable JSON form. Every field is always present (null when it does not apply), in this order:
     * {@code diagnosis, tenant_id, user_id, route, idempotency_key, status, request_hash, request_hash_matches,
     * attempts, response_code, response_content_type, response_headers, response_body, response_body_encoding,
     * response_body_omitted, task_id, outbox_event_id, locked_until, expires_at, created_at, updated_at, checked_at}.
     * {@code response_body} is the body as text when {@code response_body_encoding} is {@code utf8}, or Base64 when it
     * is {@code base64}. Times are ISO-8601 UTC instants.
     */
    public String toJson() {
        return JSON.writeValueAsString(toMap());
    }

    /** The fields of {@link #toJson()}, in order. */
    public Map<String, Object> toMap() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("diagnosis", state.jsonName());
        out.put("tenant_id", scope.tenantId());
        out.put("user_id", scope.userId());
        out.put("route", scope.route().value());
        out.put("idempotency_key", scope.key().value());
        out.put("status", status == null ? null : status.dbValue());
        out.put("request_hash", storedRequestHash);
        out.put("request_hash_matches", requestHashMatches);
        out.put("attempts", attempts);
        out.put("response_code", response == null ? null : response.statusCode());
        out.put("response_content_type", response == null ? null : response.contentType());
        out.put("response_headers", response == null ? null : response.headers());
        String text = response == null || response.bodyOmitted() ? null : utf8OrNull(response.bodyUnsafe());
        boolean hasBody = response != null && !response.bodyOmitted();
        out.put("response_body", !hasBody ? null : text != null ? text : Base64.getEncoder().encodeToString(response.bodyUnsafe()));
        out.put("response_body_encoding", !hasBody ? null : text != null ? "utf8" : "base64");
        out.put("response_body_omitted", response != null && response.bodyOmitted());
        out.put("task_id", taskId);
        out.put("outbox_event_id", outboxEventId == null ? null : outboxEventId.toString());
        out.put("locked_until", text(lockedUntil));
        out.put("expires_at", text(expiresAt));
        out.put("created_at", text(createdAt));
        out.put("updated_at", text(updatedAt));
        out.put("checked_at", text(checkedAt));
        return out;
    }

    private static String text(Instant instant) {
        return instant == null ? null : instant.toString();
    }

    private static String utf8OrNull(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }
}
