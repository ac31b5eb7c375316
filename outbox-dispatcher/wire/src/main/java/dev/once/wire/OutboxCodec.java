package dev.once.wire;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The {@link WireFormat} in code, both ways: {@link #write} is how every relay (polling, CDC, the Kafka Connect
 * transform) turns an outbox message into a Kafka record, and {@link #read} is how Once's dispatcher turns a record
 * back into the message, so that a consumer cannot tell which relay published a record, and what one side writes the
 * other reads. Signatures are {@link RecordSigning}'s; docs/WIRE.md specifies the format for other languages.
 */
public final class OutboxCodec {

    /** Kafka's record batch header (magic 2). */
    private static final int RECORD_BATCH_OVERHEAD = 61;
    /** A record's attributes and its largest length, timestamp and offset deltas, as varints. */
    private static final int MAX_RECORD_OVERHEAD = 21;

    private OutboxCodec() {
    }

    /**
     * The record of {@code message} on {@code topic}: the key is the aggregate id (UTF-8 when serialized); the value is
     * the payload as appended; the headers are the message's own, in its order, then the envelope's
     * ({@link WireFormat#ENVELOPE}), then the signature {@code signing} adds.
     */
    public static ProducerRecord<String, byte[]> write(OutboxMessage message, String topic, RecordSigning signing) {
        RecordHeaders headers = new RecordHeaders();
        message.headers().forEach((name, value) -> headers.add(name, utf8(value)));
        headers.add(WireFormat.EVENT_ID, utf8(message.id().toString()));
        headers.add(WireFormat.TENANT_ID, utf8(message.tenantId()));
        headers.add(WireFormat.ACTOR_ID, utf8(message.actorId()));
        headers.add(WireFormat.AGGREGATE_TYPE, utf8(message.aggregateType()));
        headers.add(WireFormat.EVENT_TYPE, utf8(message.eventType()));
        headers.add(WireFormat.EVENT_VERSION, utf8(Integer.toString(message.eventVersion())));
        headers.add(WireFormat.CONTENT_TYPE, utf8(message.contentType()));
        headers.add(WireFormat.FORMAT, utf8(WireFormat.FORMAT_VERSION));
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, null, message.aggregateId(),
                message.payload(), headers);
        signing.sign(record);
        return record;
    }

    /**
     * The most bytes {@code record} takes alone in a record batch, uncompressed, as Kafka's producer estimates it to
     * check a record against {@code max.request.size} (a batch's and a record's largest overheads, the key as UTF-8, the
     * value and the headers with their varint lengths); the relay checks it against its topic's
     * {@code max.message.bytes}. Written here, not taken from Kafka, whose classes for it are internal and moved in 4.3.
     */
    public static int batchSizeUpperBound(ProducerRecord<String, byte[]> record) {
        int size = RECORD_BATCH_OVERHEAD + MAX_RECORD_OVERHEAD
                + sized(record.key() == null ? -1 : utf8Length(record.key()))
                + sized(record.value() == null ? -1 : record.value().length);
        Header[] headers = record.headers().toArray();
        size += varintSize(headers.length);
        for (Header header : headers) {
            size += sized(utf8Length(header.key())) + sized(header.value() == null ? -1 : header.value().length);
        }
        return size;
    }

    /** A field of {@code length} bytes with its varint length before it; -1 is null. */
    private static int sized(int length) {
        return length < 0 ? varintSize(-1) : varintSize(length) + length;
    }

    /** The bytes of {@code value} as a zig-zag varint. */
    private static int varintSize(int value) {
        int zigZag = (value << 1) ^ (value >> 31);
        return Math.max(1, (38 - Integer.numberOfLeadingZeros(zigZag)) / 7);
    }

    private static int utf8Length(CharSequence text) {
        int length = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x80) {
                length++;
            } else if (c < 0x800) {
                length += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                length += 4;
                i++;
            } else {
                length += 3;
            }
        }
        return length;
    }

    /**
     * The message {@code record} carries. Its headers are the record's own, in their order, without the envelope's
     * ({@link WireFormat#ENVELOPE}); {@code aggregateType} is null for a record without that header (Once's dispatcher
     * does not need it), {@code contentType} is {@link WireFormat#DEFAULT_CONTENT_TYPE} for a record without one, and
     * {@code committedAt} is null. The signature is not checked here: that is {@link RecordSigning#verify}.
     *
     * @throws MalformedRecordException when the record can never be an event: a required header missing or malformed,
     *         no value, or a format version this release does not read; its message says which
     */
    public static OutboxMessage read(ConsumerRecord<String, byte[]> record) {
        Map<String, String> all = headers(record.headers());
        String format = all.get(WireFormat.FORMAT);
        if (format != null && !WireFormat.FORMAT_VERSION.equals(format)) {
            throw new MalformedRecordException("Wire format " + format + " is not one this dispatcher reads ("
                    + WireFormat.FORMAT_VERSION + "): run a version of Once that reads it");
        }
        UUID id;
        try {
            id = UUID.fromString(required(all, WireFormat.EVENT_ID));
        } catch (IllegalArgumentException e) {
            throw new MalformedRecordException("Header " + WireFormat.EVENT_ID + " is not a UUID");
        }
        int version;
        try {
            version = Integer.parseInt(required(all, WireFormat.EVENT_VERSION));
        } catch (NumberFormatException e) {
            throw new MalformedRecordException("Header " + WireFormat.EVENT_VERSION + " is not a number");
        }
        if (record.value() == null) {
            throw new MalformedRecordException("Record has no payload");
        }
        Map<String, String> own = new LinkedHashMap<>(all);
        own.keySet().removeAll(WireFormat.ENVELOPE);
        return new OutboxMessage(id, required(all, WireFormat.TENANT_ID), required(all, WireFormat.ACTOR_ID),
                all.get(WireFormat.AGGREGATE_TYPE), record.key(), required(all, WireFormat.EVENT_TYPE), version,
                record.value(), all.getOrDefault(WireFormat.CONTENT_TYPE, WireFormat.DEFAULT_CONTENT_TYPE), own, null);
    }

    /** Every header of a record as UTF-8 text, in the order of first occurrence, the last value of each name. */
    public static Map<String, String> headers(Headers headers) {
        Map<String, String> text = new LinkedHashMap<>();
        for (Header h : headers) {
            text.put(h.key(), h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8));
        }
        return text;
    }

    private static String required(Map<String, String> headers, String name) {
        String value = headers.get(name);
        if (value == null || value.isBlank()) {
            throw new MalformedRecordException("Header " + name + " is missing");
        }
        return value;
    }

    private static byte[] utf8(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }
}
