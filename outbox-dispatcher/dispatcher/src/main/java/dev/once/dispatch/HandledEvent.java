package dev.once.dispatch;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;

/**
 * An event as a handler receives it, read from the record the relay wrote.
 *
 * @param payload the record's value: the payload's bytes exactly as the application appended them (not copied: do
 *        not change them)
 * @param contentType the payload's media type, from the record's {@code content-type} header
 * @param headers the headers the event was appended with (its trace context among them), in their order: the record's
 *        headers without the envelope's ({@link dev.once.wire.WireFormat#ENVELOPE}), whose values are the fields here
 * @param derivedKey {@code <event_id>:<handler_key>}: stable across redeliveries; pass it to other services as their
 *        idempotency key
 */
public record HandledEvent(UUID eventId, String tenantId, String actorId, String eventType, int eventVersion,
                           byte[] payload, String contentType, Map<String, String> headers, String derivedKey) {

    /** The payload as UTF-8 text: the JSON document of a JSON event. */
    public String payloadJson() {
        return new String(payload, StandardCharsets.UTF_8);
    }
}
