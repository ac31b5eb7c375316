package dev.once.wire;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.wire.RecordSigning.Signature;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The signature over the canonical form: any change to a covered field (topic, key, each signed header, the payload)
 * changes it; header order and headers it does not cover (Kafka's, tracing's, the dead-letter ones) do not.
 */
class SignedContentPropertiesTest {

    static final RecordSigning SIGNING = RecordSigning.require(SigningKeys.of(Map.of("k1", "k".repeat(32)), null));
    static final List<String> FIELDS = new ArrayList<>(WireFormat.SIGNED_HEADERS);

    static {
        FIELDS.addAll(List.of("topic", "key", "payload"));
    }

    /** A record: its topic, key, payload and headers, each header once, in the order given. */
    record Rec(String topic, byte[] key, byte[] payload, List<Map.Entry<String, byte[]>> headers) {

        Function<String, byte[]> lookup() {
            return name -> {
                byte[] last = null;
                for (Map.Entry<String, byte[]> h : headers) {
                    if (h.getKey().equals(name)) {
                        last = h.getValue();
                    }
                }
                return last;
            };
        }

        Signature sign() {
            return SIGNING.sign(topic, key, payload, lookup());
        }
    }

    @Property(tries = 500)
    void every_change_to_a_covered_field_changes_the_signature(@ForAll("records") Rec record,
                                                              @ForAll("fields") String field,
                                                              @ForAll("bytes") byte[] replacement) {
        Rec changed = replace(record, field, replacement);
        boolean same = Arrays.equals(coveredBytes(record, field), coveredBytes(changed, field));

        assertThat(changed.sign().value().equals(record.sign().value())).isEqualTo(same);
    }

    @Property(tries = 300)
    void header_order_and_uncovered_headers_do_not_change_the_signature(@ForAll("records") Rec record,
                                                                       @ForAll("extras") List<Map.Entry<String, byte[]>> extras,
                                                                       @ForAll long seed) {
        List<Map.Entry<String, byte[]>> shuffled = new ArrayList<>(record.headers());
        java.util.Collections.shuffle(shuffled, new java.util.Random(seed));
        for (Map.Entry<String, byte[]> extra : extras) {
            shuffled.add(new java.util.Random(seed ^ extra.getKey().hashCode()).nextInt(shuffled.size() + 1), extra);
        }
        Rec other = new Rec(record.topic(), record.key(), record.payload(), shuffled);

        assertThat(other.sign()).isEqualTo(record.sign());
        assertThat(SIGNING.verify(other.topic(), other.key(), other.payload(), withSignature(other, record.sign())))
                .isEqualTo(RecordSigning.Verdict.VALID);
    }

    @Provide
    Arbitrary<Rec> records() {
        Arbitrary<String> text = Arbitraries.strings().ofMinLength(0).ofMaxLength(24);
        return Combinators.combine(text.map(t -> "once." + t), bytes(), bytes(), text.list().ofSize(WireFormat.SIGNED_HEADERS.size()))
                .as((topic, key, payload, values) -> {
                    List<Map.Entry<String, byte[]>> headers = new ArrayList<>();
                    for (int i = 0; i < values.size(); i++) {
                        headers.add(Map.entry(WireFormat.SIGNED_HEADERS.get(i), values.get(i).getBytes(UTF_8)));
                    }
                    return new Rec(topic, key, payload, headers);
                });
    }

    @Provide
    Arbitrary<String> fields() {
        return Arbitraries.of(FIELDS);
    }

    @Provide
    Arbitrary<byte[]> bytes() {
        return Arbitraries.bytes().array(byte[].class).ofMaxSize(40);
    }

    @Provide
    Arbitrary<List<Map.Entry<String, byte[]>>> extras() {
        Arbitrary<String> names = Arbitraries.of("traceparent", "tracestate", "baggage", "kafka_dlt-original-topic",
                WireFormat.DLT_REASON, "b3", "x-request-id");
        return Combinators.combine(names, bytes()).as(Map::entry).list().ofMaxSize(5);
    }

    private static Rec replace(Rec record, String field, byte[] replacement) {
        switch (field) {
            case "topic":
                return new Rec(new String(replacement, UTF_8), record.key(), record.payload(), record.headers());
            case "key":
                return new Rec(record.topic(), replacement, record.payload(), record.headers());
            case "payload":
                return new Rec(record.topic(), record.key(), replacement, record.headers());
            default:
                List<Map.Entry<String, byte[]>> headers = new ArrayList<>(record.headers());
                headers.replaceAll(h -> h.getKey().equals(field) ? Map.entry(field, replacement) : h);
                return new Rec(record.topic(), record.key(), record.payload(), headers);
        }
    }

    /** The bytes of {@code field} as the canonical form sees them. */
    private static byte[] coveredBytes(Rec record, String field) {
        switch (field) {
            case "topic":
                return record.topic().getBytes(UTF_8);
            case "key":
                return record.key();
            case "payload":
                return record.payload();
            default:
                return record.lookup().apply(field);
        }
    }

    private static Function<String, byte[]> withSignature(Rec record, Signature signature) {
        Map<String, byte[]> extra = new HashMap<>();
        extra.put(WireFormat.SIGNATURE, signature.value().getBytes(UTF_8));
        extra.put(WireFormat.SIGNATURE_KEY, signature.keyId().getBytes(UTF_8));
        return name -> extra.containsKey(name) ? extra.get(name) : record.lookup().apply(name);
    }
}
