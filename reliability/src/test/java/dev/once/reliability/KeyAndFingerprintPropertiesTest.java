package dev.once.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.guard.web.IdempotencyKeyHeader;
import dev.once.idempotency.IdempotencyKey;
import dev.once.idempotency.IdempotencyKeyException;
import dev.once.idempotency.RequestFingerprint;
import dev.once.idempotency.Route;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * Properties of the two parsers every request goes through: the {@code Idempotency-Key} header and the request
 * fingerprint. Whatever a client sends, they answer with a key, a hash or an {@link IdempotencyKeyException}, never
 * anything else; and they agree with their own rules on every input jqwik finds.
 */
class KeyAndFingerprintPropertiesTest {

    static final Route ROUTE = Route.http("POST", "/accounts");

    @Property
    void every_visible_ascii_key_of_1_to_255_characters_is_accepted_as_is(@ForAll("visibleAscii") String key) {
        assertThat(IdempotencyKeyHeader.parse(List.of(key)).value()).isEqualTo(key); // (quoted form: the next property)
    }

    @Property
    void a_quoted_key_round_trips_through_its_escapes(@ForAll("visibleAscii") String key) {
        String quoted = "\"" + key.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
        assertThat(IdempotencyKeyHeader.parse(List.of(quoted)).value()).isEqualTo(key);
    }

    @Property
    void any_header_value_gives_a_valid_key_or_a_key_exception_and_nothing_else(@ForAll String value) {
        try {
            IdempotencyKey key = IdempotencyKeyHeader.parse(List.of(value));
            assertThat(key.value()).hasSizeBetween(1, 255).matches("[\\x21-\\x7E]+");
        } catch (IdempotencyKeyException expected) {
            assertThat(expected.getMessage()).isNotBlank();
        }
    }

    @Property
    void a_key_with_a_character_outside_visible_ascii_is_refused(@ForAll("visibleAscii") String key,
                                                                  @ForAll("notVisibleAscii") char bad,
                                                                  @ForAll @IntRange(max = 255) int at) {
        int position = Math.min(at, key.length());
        String spoiled = key.substring(0, position) + bad + key.substring(position);
        assertThatThrownBy(() -> IdempotencyKeyHeader.parse(List.of(spoiled))).isInstanceOf(IdempotencyKeyException.class);
    }

    @Property
    void more_than_255_characters_or_none_or_two_headers_are_refused(@ForAll @Size(min = 256, max = 600) List<@net.jqwik.api.From("visibleChar") Character> chars) {
        StringBuilder tooLong = new StringBuilder();
        chars.forEach(tooLong::append);
        String value = tooLong.charAt(0) == '"' ? "k" + tooLong.substring(1) : tooLong.toString();
        assertThatThrownBy(() -> IdempotencyKeyHeader.parse(List.of(value))).isInstanceOf(IdempotencyKeyException.class);
        assertThatThrownBy(() -> IdempotencyKeyHeader.parse(List.of(""))).isInstanceOf(IdempotencyKeyException.class);
        assertThatThrownBy(() -> IdempotencyKeyHeader.parse(List.of("a", "b"))).isInstanceOf(IdempotencyKeyException.class);
    }

    @Property
    void a_json_body_hashes_the_same_whatever_its_member_order_and_whitespace(@ForAll("jsonObjects") Map<String, Object> members,
                                                                              @ForAll long seed) {
        String ordered = json(members, new ArrayList<>(new TreeMap<>(members).keySet()), "");
        List<String> shuffled = new ArrayList<>(members.keySet());
        Collections.shuffle(shuffled, new java.util.Random(seed));
        String reordered = json(members, shuffled, " \n\t");
        assertThat(hash(reordered)).isEqualTo(hash(ordered)).startsWith("v1:").hasSize(3 + 64);
    }

    @Property
    void a_different_value_gives_a_different_hash(@ForAll("jsonObjects") Map<String, Object> members,
                                                  @ForAll("plainText") String other) {
        String key = members.keySet().iterator().next();
        Map<String, Object> changed = new TreeMap<>(members);
        changed.put(key, "changed:" + other);
        assertThat(hash(json(changed, new ArrayList<>(changed.keySet()), ""))).isNotEqualTo(
                hash(json(members, new ArrayList<>(new TreeMap<>(members).keySet()), "")));
    }

    @Property
    void any_bytes_give_a_hash_or_a_refusal_of_the_json_body_and_nothing_else(@ForAll byte[] body,
                                                                            @ForAll("contentTypes") String contentType) {
        try {
            assertThat(RequestFingerprint.of("POST", ROUTE, contentType, body)).matches("v1:[0-9a-f]{64}");
        } catch (dev.once.idempotency.RequestBodyException e) {
            assertThat(contentType).endsWith("json"); // only a JSON body is refused; any other is hashed as bytes
        }
    }

    @Provide
    Arbitrary<String> visibleAscii() {
        return Arbitraries.strings().withCharRange('!', '~').ofMinLength(1).ofMaxLength(255)
                .filter(s -> !s.startsWith("\""));
    }

    @Provide
    Arbitrary<Character> visibleChar() {
        return Arbitraries.chars().range('!', '~');
    }

    @Provide
    Arbitrary<Character> notVisibleAscii() {
        return Arbitraries.oneOf(Arbitraries.chars().range('\u0000', ' '), Arbitraries.just('\u007F'),
                Arbitraries.chars().range('\u0080', '\uFFFD'));
    }

    @Provide
    Arbitrary<String> plainText() {
        return Arbitraries.strings().alpha().numeric().ofMaxLength(20);
    }

    @Provide
    Arbitrary<String> contentTypes() {
        return Arbitraries.of("application/json", "application/problem+json", "text/plain", "application/octet-stream");
    }

    @Provide
    Arbitrary<Map<String, Object>> jsonObjects() {
        Arbitrary<Object> values = Arbitraries.oneOf(plainText().map(s -> (Object) s),
                Arbitraries.integers().map(i -> (Object) i), Arbitraries.of(true, false).map(b -> (Object) b));
        return Arbitraries.maps(Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(8), values).ofMinSize(1).ofMaxSize(8);
    }

    static String json(Map<String, Object> members, List<String> order, String space) {
        StringBuilder out = new StringBuilder("{").append(space);
        for (int i = 0; i < order.size(); i++) {
            Object value = members.get(order.get(i));
            out.append(i == 0 ? "" : "," + space).append('"').append(order.get(i)).append('"').append(space).append(':')
                    .append(space).append(value instanceof String s ? "\"" + s + "\"" : String.valueOf(value));
        }
        return out.append(space).append('}').toString();
    }

    static String hash(String json) {
        return RequestFingerprint.of("POST", ROUTE, "application/json", json.getBytes(StandardCharsets.UTF_8));
    }
}
