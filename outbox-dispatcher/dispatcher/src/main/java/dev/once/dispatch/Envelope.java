package dev.once.dispatch;

import dev.once.outbox.OutboxEvent;
import dev.once.wire.WireFormat;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/** The parts of a record the dispatcher needs, read from its headers ({@link WireFormat}) and validated. */
record Envelope(UUID eventId, String tenantId, String actorId, String eventType, int eventVersion, byte[] payload,
                String contentType, Map<String, String> headers) {

    /**
     * @throws PoisonEventException when the record can never be an event: a header missing or malformed, no payload,
     *         a wire format this version does not read
     */
    static Envelope read(ConsumerRecord<String, byte[]> record) {
        Map<String, String> headers = new LinkedHashMap<>();
        for (Header h : record.headers()) {
            headers.put(h.key(), h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8));
        }
        String format = headers.get(WireFormat.FORMAT);
        if (format != null && !WireFormat.FORMAT_VERSION.equals(format)) {
            throw new PoisonEventException("Wire format " + format + " is not one this dispatcher reads ("
                    + WireFormat.FORMAT_VERSION + "): run a version of Once that reads it");
        }
        UUID id;
        try {
            id = UUID.fromString(required(headers, WireFormat.EVENT_ID));
        } catch (IllegalArgumentException e) {
            throw new PoisonEventException("Header " + WireFormat.EVENT_ID + " is not a UUID");
        }
        int version;
        try {
            version = Integer.parseInt(required(headers, WireFormat.EVENT_VERSION));
        } catch (NumberFormatException e) {
            throw new PoisonEventException("Header " + WireFormat.EVENT_VERSION + " is not a number");
        }
        byte[] payload = record.value();
        if (payload == null) {
            throw new PoisonEventException("Record has no payload");
        }
        // Relays of earlier versions wrote no content-type for their JSON payloads.
        String contentType = headers.getOrDefault(WireFormat.CONTENT_TYPE, OutboxEvent.JSON_CONTENT_TYPE);
        return new Envelope(id, required(headers, WireFormat.TENANT_ID), required(headers, WireFormat.ACTOR_ID),
                required(headers, WireFormat.EVENT_TYPE), version, payload, contentType, headers);
    }

    private static String required(Map<String, String> headers, String name) {
        String value = headers.get(name);
        if (value == null || value.isBlank()) {
            throw new PoisonEventException("Header " + name + " is missing");
        }
        return value;
    }

    /** The key the handlers of this event's type and version are registered under. */
    String handlersKey() {
        return HandlerRegistration.key(eventType, eventVersion);
    }

    HandledEvent toEvent(String handlerKey) {
        return new HandledEvent(eventId, tenantId, actorId, eventType, eventVersion, payload, contentType, headers,
                eventId + ":" + handlerKey);
    }
}
