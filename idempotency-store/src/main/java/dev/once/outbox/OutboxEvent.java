package dev.once.outbox;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.databind.json.JsonMapper;

/**
 * An event to publish: who caused it (tenant, actor), what it is about (aggregate), what happened (type and version),
 * the JSON payload, and headers such as a W3C {@code traceparent}. Immutable; build with {@link #builder()}.
 *
 * @param id the event id, or {@code null} to let {@link OutboxWriter} assign a time-ordered one
 */
public record OutboxEvent(UUID id, String tenantId, String actorId, String aggregateType, String aggregateId,
                          String eventType, int eventVersion, String payloadJson, Map<String, String> headers) {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    public OutboxEvent {
        require("tenantId", tenantId);
        require("actorId", actorId);
        require("aggregateType", aggregateType);
        require("aggregateId", aggregateId);
        require("eventType", eventType);
        if (eventVersion < 1) {
            throw new IllegalArgumentException("eventVersion must be 1 or more, was " + eventVersion);
        }
        if (payloadJson == null) {
            throw new IllegalArgumentException("payload is required");
        }
        requireJson(payloadJson);
        headers = headers == null ? Map.of() : Map.copyOf(headers);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The headers as the JSON object stored in the {@code headers} column. */
    public String headersJson() {
        return headers.isEmpty() ? "{}" : JSON.writeValueAsString(headers);
    }

    /** This event with {@code id}. */
    public OutboxEvent withId(UUID newId) {
        return new OutboxEvent(newId, tenantId, actorId, aggregateType, aggregateId, eventType, eventVersion, payloadJson, headers);
    }

    /** One JSON document and nothing after it; read token by token, without building a tree the row never needs. */
    private static void requireJson(String json) {
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

    /** Builds an {@link OutboxEvent}; the record's constructor validates. */
    public static final class Builder {

        private UUID id;
        private String tenantId;
        private String actorId;
        private String aggregateType;
        private String aggregateId;
        private String eventType;
        private int eventVersion = 1;
        private String payloadJson;
        private final Map<String, String> headers = new LinkedHashMap<>();

        private Builder() {
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

        /** The payload as a JSON document. */
        public Builder payloadJson(String json) {
            this.payloadJson = json;
            return this;
        }

        /** The payload as an object, serialised with Jackson. */
        public Builder payload(Object value) {
            this.payloadJson = JSON.writeValueAsString(value);
            return this;
        }

        public Builder header(String name, String value) {
            headers.put(name, value);
            return this;
        }

        public OutboxEvent build() {
            return new OutboxEvent(id, tenantId, actorId, aggregateType, aggregateId, eventType, eventVersion,
                    payloadJson, headers);
        }
    }
}
