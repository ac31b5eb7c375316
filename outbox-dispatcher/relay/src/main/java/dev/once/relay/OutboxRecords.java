package dev.once.relay;

import dev.once.wire.RecordSigning;
import dev.once.wire.WireFormat;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The Kafka record of an outbox message, in the {@link WireFormat}: the one way every relay builds it (both of Once's
 * own and the Kafka Connect transform), so that a consumer cannot tell which relay published a record. The topic is
 * the router's; the key is the aggregate id (UTF-8 when serialized); the value is the payload as appended; the
 * headers are the row's own, in its order, then the envelope's, then the signature.
 */
public final class OutboxRecords {

    private OutboxRecords() {
    }

    public static ProducerRecord<String, byte[]> toRecord(OutboxMessage message, TopicRouter router,
                                                          RecordSigning signing) {
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
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(router.topicFor(message), null,
                message.aggregateId(), message.payload(), headers);
        signing.sign(record);
        return record;
    }

    private static byte[] utf8(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }
}
