package dev.once.wire;

import java.util.List;
import java.util.stream.Stream;

/**
 * The contract between Once's relays and whatever consumes their records, in one place: every relay writes records
 * this way and Once's dispatcher reads them this way. Changing a name here is a breaking change of the wire format,
 * which {@code docs/WIRE.md} specifies for consumers in any language, with test vectors.
 *
 * <ul>
 *   <li><b>Topic</b>: {@code <prefix>.<aggregate_type>} by default ({@link #topic}), e.g. {@code once.account}.</li>
 *   <li><b>Key</b>: the aggregate id, UTF-8, so that an aggregate's events share a partition and keep their order.</li>
 *   <li><b>Value</b>: the event's payload.</li>
 *   <li><b>Headers</b> (UTF-8 text): {@link #EVENT_ID}, {@link #TENANT_ID}, {@link #ACTOR_ID},
 *       {@link #AGGREGATE_TYPE}, {@link #EVENT_TYPE}, {@link #EVENT_VERSION}, {@link #CONTENT_TYPE}, {@link #FORMAT},
 *       every header the
 *       event was appended with, among them the trace context current at its append ({@link #TRACE_HEADERS}), and,
 *       when the relay signs, {@link #SIGNATURE} and {@link #SIGNATURE_KEY} ({@link RecordSigning}). Where a name
 *       occurs more than once, the last one counts.</li>
 *   <li><b>Dead letters</b>: the record as it was, on {@code <topic>}{@link #DEAD_LETTER_SUFFIX}, with
 *       {@link #DLT_REASON}, {@link #DLT_HANDLER} and {@link #DLT_ATTEMPTS} added.</li>
 * </ul>
 */
public final class WireFormat {

    /** The event's id (a UUID): with tenant, actor, type, version and handler, what a handler's claim is scoped by. */
    public static final String EVENT_ID = "event_id";
    /** The tenant the event belongs to. */
    public static final String TENANT_ID = "tenant_id";
    /** Who caused the event. */
    public static final String ACTOR_ID = "actor_id";
    /** What happened, e.g. {@code AccountCreated}. */
    public static final String EVENT_TYPE = "event_type";
    /** The version of the event type's payload, a decimal integer of 1 or more. */
    public static final String EVENT_VERSION = "event_version";
    /** The payload's media type. */
    public static final String CONTENT_TYPE = "content-type";
    /** The media type of a record without {@link #CONTENT_TYPE}: relays before that header wrote JSON only. */
    public static final String DEFAULT_CONTENT_TYPE = dev.once.outbox.OutboxEvent.JSON_CONTENT_TYPE;
    /** The type of the aggregate the event belongs to; the record key is the aggregate's id. */
    public static final String AGGREGATE_TYPE = "aggregate_type";
    /**
     * The record's signature: HMAC-SHA256 or Ed25519, by the key named in {@link #SIGNATURE_KEY}, over its topic,
     * key, covered headers and payload digest ({@link RecordSigning}), in base64url without padding.
     */
    public static final String SIGNATURE = "once-signature";
    /** The id, in the key ring, of the key that made {@link #SIGNATURE}. */
    public static final String SIGNATURE_KEY = "once-signature-key";
    /**
     * The version of this wire format, {@link #FORMAT_VERSION}. A record without it was written before the header
     * existed and is version 1; a consumer refuses a version it does not know. docs/WIRE.md specifies each version.
     */
    public static final String FORMAT = "once-format";
    /** The version every relay of this release writes. */
    public static final String FORMAT_VERSION = "1";
    /** The headers a signature covers, in the order of its canonical form. */
    public static final List<String> SIGNED_HEADERS = List.of(EVENT_ID, TENANT_ID, ACTOR_ID, AGGREGATE_TYPE, EVENT_TYPE,
            EVENT_VERSION, CONTENT_TYPE);

    /** W3C Trace Context: the span the event was appended in (captured at append, carried unchanged). */
    public static final String TRACEPARENT = "traceparent";
    /** W3C Trace Context: vendor trace state, with {@link #TRACEPARENT}. */
    public static final String TRACESTATE = "tracestate";
    /** W3C Baggage: the baggage fields the application's tracer propagates. */
    public static final String BAGGAGE = "baggage";
    /**
     * The trace headers an event carries from its append to its handlers, with the W3C propagation Boot configures by
     * default (another propagation, such as B3, writes its own names, carried the same way).
     */
    public static final List<String> TRACE_HEADERS = List.of(TRACEPARENT, TRACESTATE, BAGGAGE);

    /** The default first part of topic names. */
    public static final String DEFAULT_TOPIC_PREFIX = "once";

    /** Appended to a topic's name to name its dead-letter topic. */
    public static final String DEAD_LETTER_SUFFIX = ".dlt";
    /** On a dead letter: why it could not be handled. */
    public static final String DLT_REASON = "once-dlt-reason";
    /** On a dead letter: the handler that failed, empty for a record no handler could take. */
    public static final String DLT_HANDLER = "once-dlt-handler";
    /** On a dead letter: how many deliveries were tried. */
    public static final String DLT_ATTEMPTS = "once-dlt-attempts";

    /**
     * The headers of the envelope, which a relay or a dead-letter topic adds and the event's own headers (appended with
     * it) are not: the {@link #SIGNED_HEADERS}, {@link #FORMAT}, the signature's and a dead letter's.
     */
    public static final List<String> ENVELOPE = Stream.of(SIGNED_HEADERS, List.of(FORMAT, SIGNATURE, SIGNATURE_KEY),
            List.of(DLT_REASON, DLT_HANDLER, DLT_ATTEMPTS)).flatMap(List::stream).toList();

    private WireFormat() {
    }

    /** The default topic of an aggregate type's events: {@code <prefix>.<aggregateType>}. */
    public static String topic(String prefix, String aggregateType) {
        return prefix + "." + aggregateType;
    }

    /** The dead-letter topic of {@code topic}. */
    public static String deadLetterTopic(String topic) {
        return topic + DEAD_LETTER_SUFFIX;
    }
}
