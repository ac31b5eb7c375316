package dev.once.wire;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * One committed outbox row on its way to Kafka, as either relay reads it.
 *
 * @param payload the payload's bytes, exactly as the application appended them, sent as the record value (not copied:
 *        the relay that read the row owns them, and nothing may change them)
 * @param contentType the payload's media type, sent as the record's {@code content-type} header
 * @param headers the row's headers (e.g. {@code traceparent}), sent as record headers
 * @param committedAt when the row was committed (CDC) or written (polling), for commit-to-ack latency; may be null
 */
public record OutboxMessage(UUID id, String tenantId, String actorId, String aggregateType, String aggregateId,
                            String eventType, int eventVersion, byte[] payload, String contentType,
                            Map<String, String> headers,
                            java.time.Instant committedAt) {

    public OutboxMessage {
        // kept in the row's order: a record's headers are the same, in the same order, whichever relay built it
        headers = headers == null ? Map.of() : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(headers));
    }

    /** The {@code headers} column's JSON object as a map, in its order; empty for {@code null} or {@code {}}. */
    public static Map<String, String> headersFromJson(String json) {
        return json == null || json.equals("{}") ? Map.of() : JSON.readValue(json, HEADERS);
    }

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final TypeReference<LinkedHashMap<String, String>> HEADERS = new TypeReference<>() { };

    /** The aggregate's identity, which orders its events. */
    public String aggregate() {
        return aggregateType + "/" + aggregateId;
    }
}
