package dev.once.wire;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.wire.RecordSigning.Mode;
import dev.once.wire.RecordSigning.Signature;
import dev.once.wire.RecordSigning.Verdict;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** Signing and verifying a record's canonical form, in each mode and across a key rotation. */
class RecordSigningTest {

    static final String A = "a".repeat(32);
    static final String B = "b".repeat(40);

    final Map<String, String> headers = new LinkedHashMap<>(Map.of(WireFormat.EVENT_ID, "0193c3a0-0000-7000-8000-000000000001",
            WireFormat.TENANT_ID, "acme", WireFormat.ACTOR_ID, "alice", WireFormat.AGGREGATE_TYPE, "order",
            WireFormat.EVENT_TYPE, "OrderPlaced", WireFormat.EVENT_VERSION, "1", WireFormat.CONTENT_TYPE, "application/json"));
    final byte[] key = "o-1".getBytes(UTF_8);
    final byte[] value = "{\"total\":12}".getBytes(UTF_8);

    @Test
    void a_signed_record_verifies_and_the_signature_travels_with_its_key_id() {
        RecordSigning signing = RecordSigning.require(SigningKeys.of(Map.of("k1", A), null));

        Signature signature = sign(signing);

        assertThat(signature.keyId()).isEqualTo("k1");
        assertThat(signature.value()).matches("[A-Za-z0-9_-]{43}");
        assertThat(verify(signing)).isEqualTo(Verdict.VALID);
    }

    @Test
    void a_changed_tenant_actor_payload_topic_or_key_is_invalid() {
        RecordSigning signing = RecordSigning.require(SigningKeys.of(Map.of("k1", A), null));
        sign(signing);

        headers.put(WireFormat.TENANT_ID, "globex");
        assertThat(verify(signing)).isEqualTo(Verdict.INVALID);
        headers.put(WireFormat.TENANT_ID, "acme");
        headers.put(WireFormat.ACTOR_ID, "mallory");
        assertThat(verify(signing)).isEqualTo(Verdict.INVALID);
        headers.put(WireFormat.ACTOR_ID, "alice");
        assertThat(verify(signing)).isEqualTo(Verdict.VALID);

        byte[] changed = value.clone();
        changed[3] ^= 1;
        assertThat(signing.verify("once.order", key, changed, header())).isEqualTo(Verdict.INVALID);
        assertThat(signing.verify("once.invoice", key, value, header())).isEqualTo(Verdict.INVALID);
        assertThat(signing.verify("once.order", "o-2".getBytes(UTF_8), value, header())).isEqualTo(Verdict.INVALID);
    }

    @Test
    void an_unsigned_record_is_missing_under_require_and_accepted_under_verify_if_present() {
        SigningKeys keys = SigningKeys.of(Map.of("k1", A), null);

        assertThat(verify(RecordSigning.require(keys))).isEqualTo(Verdict.MISSING);
        assertThat(verify(RecordSigning.of(Mode.VERIFY_IF_PRESENT, keys))).isEqualTo(Verdict.UNSIGNED);
        assertThat(verify(RecordSigning.off())).isEqualTo(Verdict.NOT_CHECKED);
        assertThat(RecordSigning.off().sign("once.order", key, value, header())).isNull();
    }

    @Test
    void verify_if_present_still_refuses_a_signature_that_does_not_match() {
        RecordSigning signing = RecordSigning.of(Mode.VERIFY_IF_PRESENT, SigningKeys.of(Map.of("k1", A), null));
        sign(signing);
        headers.put(WireFormat.TENANT_ID, "globex");

        assertThat(verify(signing)).isEqualTo(Verdict.INVALID);
    }

    @Test
    void keys_rotate_sign_with_b_while_a_still_verifies_then_a_removed_is_unknown() {
        RecordSigning before = RecordSigning.require(SigningKeys.of(Map.of("a", A), null));
        RecordSigning during = RecordSigning.require(SigningKeys.of(ordered("a", A, "b", B), "b"));
        RecordSigning after = RecordSigning.require(SigningKeys.of(Map.of("b", B), null));

        sign(before);
        assertThat(verify(during)).as("signed with a, verified during the rotation").isEqualTo(Verdict.VALID);
        assertThat(verify(after)).as("a removed").isEqualTo(Verdict.UNKNOWN_KEY);

        assertThat(sign(during).keyId()).isEqualTo("b");
        assertThat(verify(during)).isEqualTo(Verdict.VALID);
        assertThat(verify(after)).isEqualTo(Verdict.VALID);
    }

    @Test
    void a_key_id_the_ring_does_not_hold_is_unknown_and_a_lone_signature_header_is_missing() {
        RecordSigning signing = RecordSigning.require(SigningKeys.of(Map.of("k1", A), null));
        sign(signing);
        headers.put(WireFormat.SIGNATURE_KEY, "k9");
        assertThat(verify(signing)).isEqualTo(Verdict.UNKNOWN_KEY);

        headers.remove(WireFormat.SIGNATURE_KEY);
        assertThat(verify(signing)).isEqualTo(Verdict.MISSING);
    }

    @Test
    void the_codes_of_refusals_are_stable() {
        assertThat(Verdict.MISSING.code()).isEqualTo("SIGNATURE_MISSING");
        assertThat(Verdict.UNKNOWN_KEY.code()).isEqualTo("SIGNATURE_UNKNOWN_KEY");
        assertThat(Verdict.INVALID.code()).isEqualTo("SIGNATURE_INVALID");
        assertThat(Verdict.VALID.accepted()).isTrue();
        assertThat(Verdict.INVALID.accepted()).isFalse();
    }

    @Test
    void a_mode_that_signs_needs_a_key() {
        assertThatThrownBy(() -> RecordSigning.of(Mode.REQUIRE, SigningKeys.none()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("needs at least one key");
    }

    private Signature sign(RecordSigning signing) {
        headers.remove(WireFormat.SIGNATURE);
        headers.remove(WireFormat.SIGNATURE_KEY);
        Signature signature = signing.sign("once.order", key, value, header());
        headers.put(WireFormat.SIGNATURE, signature.value());
        headers.put(WireFormat.SIGNATURE_KEY, signature.keyId());
        return signature;
    }

    private Verdict verify(RecordSigning signing) {
        return signing.verify("once.order", key, value, header());
    }

    private Function<String, byte[]> header() {
        return name -> headers.get(name) == null ? null : headers.get(name).getBytes(UTF_8);
    }

    private static Map<String, String> ordered(String k1, String v1, String k2, String v2) {
        Map<String, String> map = new LinkedHashMap<>();
        map.put(k1, v1);
        map.put(k2, v2);
        return map;
    }
}
