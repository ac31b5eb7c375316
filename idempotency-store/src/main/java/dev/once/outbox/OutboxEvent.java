package dev.once.outbox;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.databind.json.JsonMapper;

/**
 * An event to publish: who caused it (tenant, actor), what it is about (aggregate), what happened (type and version),
 * the payload with its media type, and headers such as a W3C {@code traceparent}. The payload is kept and published
 * byte for byte: the Kafka record's value is exactly {@link #payload()}. A JSON payload ({@code application/json} or
 * {@code *+json}) must be one JSON document; any other is opaque bytes (Avro, Protobuf, a framed payload). Immutable;
 * build with {@link #builder()}.
 *
 * @param id the event id, or {@code null} to let {@link OutboxWriter} assign a time-ordered one
 * @param contentType the payload's media type, sent as the record's {@code content-type} header
 */
public record OutboxEvent(UUID id, String tenantId, String actorId, String aggregateType, String aggregateId,
                          String eventType, int eventVersion, byte[] payload, String contentType,
                          Map<String, String> headers) {

    /** The media type of payloads given as JSON text or as an object. */
    public static final String JSON_CONTENT_TYPE = "application/json";

    private static final JsonMapper JSON = JsonMapper.builder().build();

    public OutboxEvent {
        require("tenantId", tenantId);
        require("actorId", actorId);
        require("aggregateType", aggregateType);
        require("aggregateId", aggregateId);
        require("eventType", eventType);
        require("contentType", contentType);
        if (eventVersion < 1) {
            throw new IllegalArgumentException("eventVersion must be 1 or more, was " + eventVersion);
        }
        if (payload == null) {
            throw new IllegalArgumentException("payload is required");
        }
        payload = payload.clone();
        if (isJson(contentType)) {
            requireJson(payload);
        }
        headers = headers == null ? Map.of() : Map.copyOf(headers);
    }

    /**
     * A builder whose {@link Builder#payload(Object)} serialises with a plain {@code JsonMapper} (Jackson's defaults).
     * To serialise with the application's own (its naming strategy, modules and serializers), take the builder from
     * {@link OutboxWriter#event()} or {@code MutationContext.event(...)}, or use {@link #builder(JsonMapper)}.
     */
    public static Builder builder() {
        return new Builder(JSON);
    }

    /** A builder whose {@link Builder#payload(Object)} serialises with {@code json}, e.g. the application's bean. */
    public static Builder builder(JsonMapper json) {
        if (json == null) {
            throw new IllegalArgumentException("a JsonMapper is required; builder() takes Jackson's defaults");
        }
        return new Builder(json);
    }

    /** The mapper of {@link #builder()}: Jackson's defaults. */
    static JsonMapper defaultMapper() {
        return JSON;
    }

    /** A copy of the payload's bytes. */
    @Override
    public byte[] payload() {
        return payload.clone();
    }

    /** The payload as UTF-8 text: for JSON and other textual payloads. */
    public String payloadText() {
        return new String(payload, StandardCharsets.UTF_8);
    }

    /** The headers as the JSON object stored in the {@code headers} column. */
    public String headersJson() {
        return headers.isEmpty() ? "{}" : JSON.writeValueAsString(headers);
    }

    /** This event with {@code id}. */
    public OutboxEvent withId(UUID newId) {
        return new OutboxEvent(newId, tenantId, actorId, aggregateType, aggregateId, eventType, eventVersion, payload,
                contentType, headers);
    }

    /** This event with {@code newHeaders} in place of its headers. */
    public OutboxEvent withHeaders(Map<String, String> newHeaders) {
        return new OutboxEvent(id, tenantId, actorId, aggregateType, aggregateId, eventType, eventVersion, payload,
                contentType, newHeaders);
    }

    /** Whether {@code contentType} names JSON: {@code application/json} or {@code application/*+json}. */
    public static boolean isJson(String contentType) {
        int semicolon = contentType.indexOf(';');
        String type = (semicolon < 0 ? contentType : contentType.substring(0, semicolon)).trim().toLowerCase(Locale.ROOT);
        return type.equals(JSON_CONTENT_TYPE) || (type.startsWith("application/") && type.endsWith("+json"));
    }

    /** One JSON document and nothing after it; read token by token, without building a tree the row never needs. */
    private static void requireJson(byte[] json) {
        try (JsonParser parser = JSON.createParser(json)) {
            if (parser.nextToken() == null) {
                throw new IllegalArgumentException("payload is not JSON: it is empty");
            }
            parser.skipChildren();
            if (parser.nextToken() != null) {
                throw new IllegalArgumentException("payload is not JSON: more follows the first document");
            }
        } catch (JacksonException e) {
            throw new IllegalArgumentException("payload is not JSON: " + e.getOriginalMessage(), e);
        }
    }

    private static void require(String name, String value) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(name + " is required");
        }
    }

    /** An event's equality is its id's and content's; the payload compares by its bytes. */
    @Override
    public boolean equals(Object other) {
        return other instanceof OutboxEvent e && java.util.Objects.equals(id, e.id) && tenantId.equals(e.tenantId)
                && actorId.equals(e.actorId) && aggregateType.equals(e.aggregateType)
                && aggregateId.equals(e.aggregateId) && eventType.equals(e.eventType)
                && eventVersion == e.eventVersion && java.util.Arrays.equals(payload, e.payload)
                && contentType.equals(e.contentType) && headers.equals(e.headers);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(id, aggregateType, aggregateId, eventType, eventVersion,
                java.util.Arrays.hashCode(payload));
    }

    @Override
    public String toString() {
        return "OutboxEvent[" + id + " " + eventType + " v" + eventVersion + " of " + aggregateType + "/" + aggregateId
                + ", tenant " + tenantId + ", " + payload.length + " bytes of " + contentType + "]";
    }

    /** Builds an {@link OutboxEvent}; the record's constructor validates. */
    public static final class Builder {

        private UUID id;
        private String tenantId;
        private String actorId;
        private String aggregateType;
        private String aggregateId;
        private String eventType;
        private int eventVersion = 1;
        private byte[] payload;
        private String contentType = JSON_CONTENT_TYPE;
        private final Map<String, String> headers = new LinkedHashMap<>();
        private final JsonMapper json;

        private Builder(JsonMapper json) {
            this.json = json;
        }

        public Builder id(UUID id) {
            this.id = id;
            return this;
        }

        public Builder tenantId(String tenantId) {
            this.tenantId = tenantId;
            return this;
        }

        public Builder actorId(String actorId) {
            this.actorId = actorId;
            return this;
        }

        public Builder aggregate(String type, String id) {
            this.aggregateType = type;
            this.aggregateId = id;
            return this;
        }

        public Builder type(String eventType, int version) {
            this.eventType = eventType;
            this.eventVersion = version;
            return this;
        }

        /** The payload as a JSON document, kept as written (its UTF-8 bytes), as {@code application/json}. */
        public Builder payloadJson(String json) {
            return payload(json == null ? null : json.getBytes(StandardCharsets.UTF_8), JSON_CONTENT_TYPE);
        }

        /**
         * The payload as an object, serialised with this builder's {@code JsonMapper} (the application's when the
         * builder came from {@link OutboxWriter#event()} or the guard), as {@code application/json}.
         */
        public Builder payload(Object value) {
            return payload(json.writeValueAsBytes(value), JSON_CONTENT_TYPE);
        }

        /** The payload as bytes of {@code contentType}, e.g. {@code application/avro} or {@code application/x-protobuf}. */
        public Builder payload(byte[] bytes, String contentType) {
            this.payload = bytes;
            this.contentType = contentType;
            return this;
        }

        public Builder header(String name, String value) {
            headers.put(name, value);
            return this;
        }

        public OutboxEvent build() {
            return new OutboxEvent(id, tenantId, actorId, aggregateType, aggregateId, eventType, eventVersion, payload,
                    contentType, headers);
        }
    }
}
