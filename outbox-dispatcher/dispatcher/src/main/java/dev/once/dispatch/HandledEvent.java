package dev.once.dispatch;

import java.util.Map;
import java.util.UUID;

/**
 * An event as a handler receives it, read from the headers the relay wrote.
 *
 * @param derivedKey {@code <event_id>:<handler_key>}: stable across redeliveries; pass it to other services as their
 *        idempotency key
 */
public record HandledEvent(UUID eventId, String tenantId, String actorId, String eventType, int eventVersion,
                           String payloadJson, Map<String, String> headers, String derivedKey) {
}
