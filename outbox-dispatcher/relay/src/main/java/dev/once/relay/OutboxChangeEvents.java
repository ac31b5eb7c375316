package dev.once.relay;

import dev.once.wire.OutboxMessage;
import java.time.Instant;
import java.util.UUID;
import org.apache.kafka.connect.data.Struct;

/**
 * Debezium's change events of the outbox table, read as {@link OutboxMessage messages}: the one reading shared by the
 * CDC relay (Debezium embedded) and the Kafka Connect transform ({@code once-connect}), so that both relay a row
 * alike. Only inserts ({@code op} {@code c}) and snapshot reads ({@code r}) of {@code outbox_event} are messages;
 * updates, deletes, heartbeats and every other record are not. Needs Kafka Connect's API on the classpath.
 */
public final class OutboxChangeEvents {

    /** The outbox table, as Debezium names it in a change event's {@code source.table}. */
    public static final String TABLE = "outbox_event";

    private static final String JSON_CONTENT = "application/json";

    private OutboxChangeEvents() {
    }

    /** The message a change event's value holds, or {@code null} when it holds none. */
    public static OutboxMessage toMessage(Object changeEventValue) {
        if (!(changeEventValue instanceof Struct value) || value.schema().field("op") == null) {
            return null; // heartbeats and other control records
        }
        String op = value.getString("op");
        Struct source = value.getStruct("source");
        if (!("c".equals(op) || "r".equals(op)) || source == null || !TABLE.equals(source.getString("table"))) {
            return null;
        }
        Struct row = value.getStruct("after");
        return new OutboxMessage(UUID.fromString(row.getString("id")), row.getString("tenant_id"),
                row.getString("actor_id"), row.getString("aggregate_type"), row.getString("aggregate_id"),
                row.getString("event_type"), row.getInt32("event_version"), row.getBytes("payload"),
                // a publication of an earlier version, which the relay could not widen, lists no content_type
                row.schema().field("content_type") == null ? JSON_CONTENT : row.getString("content_type"),
                OutboxMessage.headersFromJson(row.getString("headers")),
                source.getInt64("ts_ms") == null ? null : Instant.ofEpochMilli(source.getInt64("ts_ms")));
    }
}
