package dev.once.relay;

import java.util.Map;
import java.util.UUID;

/**
 * One committed outbox row on its way to Kafka, as either relay reads it.
 *
 * @param payloadJson the JSON payload, sent as the record value
 * @param headers the row's headers (e.g. {@code traceparent}), sent as record headers
 * @param committedAt when the row was committed (CDC) or written (polling), for commit-to-ack latency; may be null
 */
public record OutboxMessage(UUID id, String tenantId, String actorId, String aggregateType, String aggregateId,
                            String eventType, int eventVersion, String payloadJson, Map<String, String> headers,
                            java.time.Instant committedAt) {

    public OutboxMessage {
        headers = headers == null ? Map.of() : Map.copyOf(headers);
    }

    /** The aggregate's identity, which orders its events. */
    public String aggregate() {
        return aggregateType + "/" + aggregateId;
    }
}
