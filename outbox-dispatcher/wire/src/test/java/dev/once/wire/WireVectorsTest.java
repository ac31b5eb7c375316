package dev.once.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The test vectors of docs/WIRE.md ({@code docs/wire-vectors.json}), computed outside Java (the canonical form in
 * Python, the HMAC with Python's hmac, the Ed25519 signature with {@code openssl pkeyutl}): Once's signing gives the
 * same bytes, verifies them, and a ring of public keys verifies Ed25519 records but cannot sign one.
 */
class WireVectorsTest {

    static final JsonNode VECTORS = read();

    static JsonNode read() {
        try {
            return JsonMapper.builder().build().readTree(Files.readString(Path.of("../../docs/wire-vectors.json")));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static List<JsonNode> cases() {
        return VECTORS.get("cases").valueStream().toList();
    }

    static final SigningKeys HMAC = SigningKeys.of(Map.of(VECTORS.at("/hmac/key_id").asString(),
            VECTORS.at("/hmac/secret").asString()), null);
    static final SigningKeys ED25519 = SigningKeys.builder().ed25519(VECTORS.at("/ed25519/key_id").asString(),
            VECTORS.at("/ed25519/public_key_pem").asString(), VECTORS.at("/ed25519/private_key_pem").asString()).build();
    static final SigningKeys ED25519_PUBLIC_ONLY = SigningKeys.builder().ed25519(VECTORS.at("/ed25519/key_id").asString(),
            VECTORS.at("/ed25519/public_key_pem").asString(), null).build();

    @ParameterizedTest
    @MethodSource("cases")
    void the_canonical_form_is_the_documented_one(JsonNode vector) throws Exception {
        byte[] form = SignedContent.of(vector.get("topic").asString(), key(vector), payload(vector),
                name -> header(vector, name));
        assertThat(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(form)))
                .isEqualTo(vector.get("canonical_form_sha256").asString());
    }

    @ParameterizedTest
    @MethodSource("cases")
    void hmac_and_ed25519_sign_as_the_vectors_say_and_verify(JsonNode vector) {
        assertThat(signature(RecordSigning.require(HMAC), vector)).isEqualTo(vector.get("hmac_signature").asString());
        assertThat(signature(RecordSigning.require(ED25519), vector))
                .as("Ed25519 is deterministic: the same key and form give the same signature")
                .isEqualTo(vector.get("ed25519_signature").asString());

        assertThat(RecordSigning.require(HMAC).verify(received(vector, "h1", vector.get("hmac_signature").asString())))
                .isEqualTo(RecordSigning.Verdict.VALID);
        assertThat(RecordSigning.require(ED25519_PUBLIC_ONLY).verify(received(vector, "e1",
                vector.get("ed25519_signature").asString()))).isEqualTo(RecordSigning.Verdict.VALID);
    }

    @ParameterizedTest
    @MethodSource("cases")
    void a_consumer_with_public_keys_only_cannot_sign_and_refuses_a_changed_record(JsonNode vector) {
        RecordSigning consumer = RecordSigning.require(ED25519_PUBLIC_ONLY);
        assertThat(ED25519_PUBLIC_ONLY.current()).isNull();
        assertThatThrownBy(() -> consumer.sign(record(vector))).hasMessageContaining("public keys only");

        ConsumerRecord<String, byte[]> changed = received(vector, "e1", vector.get("ed25519_signature").asString());
        changed.headers().add(WireFormat.TENANT_ID, "mallory".getBytes(StandardCharsets.UTF_8));
        assertThat(consumer.verify(changed)).isEqualTo(RecordSigning.Verdict.INVALID);
        assertThat(consumer.verify(received(vector, "e1", vector.get("hmac_signature").asString())))
                .as("an HMAC signature under the Ed25519 key's id").isEqualTo(RecordSigning.Verdict.INVALID);
    }

    private static String signature(RecordSigning signing, JsonNode vector) {
        ProducerRecord<String, byte[]> record = record(vector);
        signing.sign(record);
        return new String(record.headers().lastHeader(WireFormat.SIGNATURE).value(), StandardCharsets.UTF_8);
    }

    private static ProducerRecord<String, byte[]> record(JsonNode vector) {
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(vector.get("topic").asString(),
                vector.get("key").isNull() ? null : vector.get("key").asString(), payload(vector));
        vector.get("headers").properties().forEach(h -> record.headers().add(h.getKey(),
                h.getValue().asString().getBytes(StandardCharsets.UTF_8)));
        return record;
    }

    private static ConsumerRecord<String, byte[]> received(JsonNode vector, String keyId, String signature) {
        ProducerRecord<String, byte[]> sent = record(vector);
        ConsumerRecord<String, byte[]> record = new ConsumerRecord<>(sent.topic(), 0, 0, sent.key(), sent.value());
        sent.headers().forEach(h -> record.headers().add(h));
        record.headers().add(WireFormat.SIGNATURE_KEY, keyId.getBytes(StandardCharsets.UTF_8));
        record.headers().add(WireFormat.SIGNATURE, signature.getBytes(StandardCharsets.UTF_8));
        return record;
    }

    private static byte[] key(JsonNode vector) {
        return vector.get("key").isNull() ? null : vector.get("key").asString().getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] payload(JsonNode vector) {
        return vector.get("payload").asString().getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] header(JsonNode vector, String name) {
        JsonNode value = vector.get("headers").get(name);
        return value == null ? null : value.asString().getBytes(StandardCharsets.UTF_8);
    }
}
