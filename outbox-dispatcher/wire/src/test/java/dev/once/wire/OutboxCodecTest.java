package dev.once.wire;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** What a relay writes ({@link OutboxCodec#write}), the dispatcher reads back ({@link OutboxCodec#read}) unchanged. */
class OutboxCodecTest {

    static final RecordSigning SIGNING = RecordSigning.require(SigningKeys.of(Map.of("k1", "k".repeat(32)), "k1"));

    @Property(tries = 500)
    void what_a_relay_writes_the_dispatcher_reads_back_and_its_signature_verifies(@ForAll("messages") OutboxMessage sent) {
        ConsumerRecord<String, byte[]> received = overTheWire(OutboxCodec.write(sent, "once.order", SIGNING));

        OutboxMessage read = OutboxCodec.read(received);

        assertThat(read).usingRecursiveComparison().ignoringFields("committedAt").isEqualTo(sent);
        assertThat(read.headers().keySet()).as("the message's own headers, in their order")
                .containsExactlyElementsOf(sent.headers().keySet());
        assertThat(SIGNING.verify(received).accepted()).isTrue();
    }

    @Property(tries = 200)
    void the_size_a_relay_checks_against_a_topics_limit_is_kafkas_own_estimate(@ForAll("messages") OutboxMessage sent) {
        ProducerRecord<String, byte[]> record = OutboxCodec.write(sent, "once.order", SIGNING);

        assertThat(OutboxCodec.batchSizeUpperBound(record)).isEqualTo(kafkasEstimate(record));
    }

    @Example
    void the_size_estimate_counts_four_byte_characters_null_fields_and_long_varints_as_kafka_does() {
        for (int valueBytes : new int[] {0, 127, 128, 16_383, 16_384, 2_097_152}) {
            ProducerRecord<String, byte[]> record = new ProducerRecord<>("once.order", null, "o-\uD83D\uDE00-\u00E9-\u4E2D",
                    new byte[valueBytes], new RecordHeaders().add("traceparent", null).add("\u00E9t\u00E9", new byte[200]));
            assertThat(OutboxCodec.batchSizeUpperBound(record)).as("a value of %d bytes", valueBytes)
                    .isEqualTo(kafkasEstimate(record));
        }
        ProducerRecord<String, byte[]> nothing = new ProducerRecord<>("once.order", null, (String) null, (byte[]) null,
                new RecordHeaders());
        assertThat(OutboxCodec.batchSizeUpperBound(nothing)).isEqualTo(kafkasEstimate(nothing));
    }

    /** What Kafka's producer (4.1) estimates, with classes of its own that 4.3 made internal: this test's yardstick. */
    static int kafkasEstimate(ProducerRecord<String, byte[]> record) {
        return org.apache.kafka.common.record.AbstractRecords.estimateSizeInBytesUpperBound(
                org.apache.kafka.common.record.RecordBatch.CURRENT_MAGIC_VALUE,
                org.apache.kafka.common.record.CompressionType.NONE,
                record.key() == null ? null : record.key().getBytes(UTF_8), record.value(), record.headers().toArray());
    }

    @Example
    void the_envelope_is_not_one_of_the_events_own_headers_and_the_last_value_of_a_name_counts() {
        ProducerRecord<String, byte[]> written = OutboxCodec.write(message(Map.of("traceparent", "00-aa-bb-01")),
                "once.order", RecordSigning.off());
        written.headers().add(WireFormat.DLT_REASON, "x".getBytes(UTF_8)); // a dead letter re-published
        written.headers().add("traceparent", "00-cc-dd-01".getBytes(UTF_8));

        OutboxMessage read = OutboxCodec.read(overTheWire(written));

        assertThat(read.headers()).containsExactly(Map.entry("traceparent", "00-cc-dd-01"));
        assertThat(OutboxCodec.headers(written.headers())).containsKeys(WireFormat.ENVELOPE.stream()
                .filter(h -> !h.startsWith("once-signature") && !h.equals(WireFormat.DLT_HANDLER)
                        && !h.equals(WireFormat.DLT_ATTEMPTS)).toArray(String[]::new));
    }

    @Example
    void a_record_of_a_relay_before_the_content_type_and_format_headers_reads_as_json_of_format_1() {
        ProducerRecord<String, byte[]> written = OutboxCodec.write(message(Map.of()), "once.order", RecordSigning.off());
        written.headers().remove(WireFormat.CONTENT_TYPE);
        written.headers().remove(WireFormat.FORMAT);

        assertThat(OutboxCodec.read(overTheWire(written)).contentType()).isEqualTo(WireFormat.DEFAULT_CONTENT_TYPE);
    }

    @Example
    void a_record_that_can_never_be_an_event_is_refused_with_what_is_wrong() {
        assertRefused(r -> r.headers().remove(WireFormat.TENANT_ID), "Header tenant_id is missing");
        assertRefused(r -> replace(r, WireFormat.ACTOR_ID, " "), "Header actor_id is missing");
        assertRefused(r -> replace(r, WireFormat.EVENT_ID, "42"), "Header event_id is not a UUID");
        assertRefused(r -> replace(r, WireFormat.EVENT_VERSION, "v2"), "Header event_version is not a number");
        assertRefused(r -> replace(r, WireFormat.FORMAT, "2"), "Wire format 2 is not one this dispatcher reads (1): "
                + "run a version of Once that reads it");
        ProducerRecord<String, byte[]> written = OutboxCodec.write(message(Map.of()), "once.order", RecordSigning.off());
        assertThatThrownBy(() -> OutboxCodec.read(overTheWire(new ProducerRecord<>(written.topic(), null,
                written.key(), null, written.headers())))).isInstanceOf(MalformedRecordException.class)
                .hasMessage("Record has no payload");
    }

    interface Change {
        void apply(ProducerRecord<String, byte[]> record);
    }

    static void assertRefused(Change change, String message) {
        ProducerRecord<String, byte[]> written = OutboxCodec.write(message(Map.of()), "once.order", RecordSigning.off());
        change.apply(written);
        assertThatThrownBy(() -> OutboxCodec.read(overTheWire(written)))
                .isInstanceOf(MalformedRecordException.class).hasMessage(message);
    }

    static void replace(ProducerRecord<String, byte[]> record, String header, String value) {
        record.headers().remove(header);
        record.headers().add(header, value.getBytes(UTF_8));
    }

    static OutboxMessage message(Map<String, String> headers) {
        return new OutboxMessage(UUID.randomUUID(), "acme", "alice", "order", "o-1", "OrderPlaced", 1,
                "{\"total\":12}".getBytes(UTF_8), "application/json", headers, null);
    }

    /** The record as a consumer receives it: key and value through Kafka's serializers, headers as sent. */
    static ConsumerRecord<String, byte[]> overTheWire(ProducerRecord<String, byte[]> sent) {
        try (StringSerializer keys = new StringSerializer(); StringDeserializer keysBack = new StringDeserializer();
             ByteArraySerializer values = new ByteArraySerializer();
             ByteArrayDeserializer valuesBack = new ByteArrayDeserializer()) {
            byte[] key = keys.serialize(sent.topic(), sent.key());
            byte[] value = values.serialize(sent.topic(), sent.value());
            return new ConsumerRecord<>(sent.topic(), 0, 0L, 0L, TimestampType.CREATE_TIME,
                    key == null ? -1 : key.length, value == null ? -1 : value.length,
                    keysBack.deserialize(sent.topic(), key), valuesBack.deserialize(sent.topic(), value),
                    new RecordHeaders(sent.headers().toArray()), Optional.empty());
        }
    }

    @Provide
    Arbitrary<OutboxMessage> messages() {
        // any text UTF-8 encodes (no lone surrogates), not blank: what a writer accepts
        Arbitrary<String> text = Arbitraries.strings().withCharRange(' ', '\uD7FF').ofMinLength(1).ofMaxLength(40)
                .filter(s -> !s.isBlank());
        Arbitrary<Map<String, String>> headers = Arbitraries.maps(
                Arbitraries.strings().alpha().numeric().withChars('-', '_').ofMinLength(1).ofMaxLength(20)
                        .filter(name -> !WireFormat.ENVELOPE.contains(name)),
                Arbitraries.strings().withCharRange(' ', '\uD7FF').ofMaxLength(60)).ofMaxSize(4).map(LinkedHashMap::new);
        return Combinators.combine(text, text, text, text, text, Arbitraries.integers().between(1, 1_000),
                        Arbitraries.bytes().array(byte[].class).ofMaxSize(200),
                        Arbitraries.of("application/json", "application/octet-stream", "text/plain; charset=utf-8"))
                .flatAs((tenant, actor, aggregateType, aggregateId, type, version, payload, contentType) ->
                        headers.map(h -> new OutboxMessage(UUID.randomUUID(), tenant, actor, aggregateType, aggregateId,
                                type, version, payload, contentType, h, null)));
    }
}
