package dev.once.wire;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Objects;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * Signs the records a relay publishes and verifies them where they are consumed, so that the envelope a handler's
 * claim is scoped by (tenant, actor, event id, type, version) and the payload it handles are the ones an outbox row
 * held. The signature is an HMAC-SHA256, with the current key of a {@link SigningKeys} ring, over a canonical form of
 * the topic, the key (the aggregate id), the headers of {@link WireFormat#SIGNED_HEADERS} and the payload's SHA-256
 * ({@code SignedContent}); it travels in {@link WireFormat#SIGNATURE}, the key's id in {@link WireFormat#SIGNATURE_KEY}.
 * With an Ed25519 key the signature is Ed25519 over the same form: relays sign with the private key, and a consumer
 * that holds only public keys verifies and cannot sign ({@link SigningKeys}).
 *
 * <p>It is integrity and origin, not confidentiality: whoever holds a key of the ring can sign, and anyone who can
 * read the topic reads the payload. A record copied unchanged to the topic it was signed for (a dead letter
 * re-published) still verifies; one moved to another topic or key, or with any covered field changed, does not.
 * Immutable and thread-safe.
 */
public final class RecordSigning {

    /** What the consuming side does with signatures; a relay signs in every mode but {@link #OFF}. */
    public enum Mode {
        /** Every record must carry a valid signature of a key in the ring. The default whenever a key is configured. */
        REQUIRE,
        /** A record without a signature is accepted, one with a signature must verify: for a migration period. */
        VERIFY_IF_PRESENT,
        /** Nothing is signed or verified: anyone who can write to the topics chooses tenant and actor. */
        OFF
    }

    /** What {@link #verify} found. */
    public enum Verdict {
        VALID(true),
        /** No signature, accepted in {@link Mode#VERIFY_IF_PRESENT}. */
        UNSIGNED(true),
        /** Not checked: {@link Mode#OFF}. */
        NOT_CHECKED(true),
        MISSING(false),
        UNKNOWN_KEY(false),
        INVALID(false);

        private final boolean accepted;

        Verdict(boolean accepted) {
            this.accepted = accepted;
        }

        public boolean accepted() {
            return accepted;
        }

        /** The stable code of a refusal ({@code SIGNATURE_MISSING}, {@code SIGNATURE_UNKNOWN_KEY}, {@code SIGNATURE_INVALID}). */
        public String code() {
            return "SIGNATURE_" + name();
        }
    }

    /** A signature and the id of the key that made it. */
    record Signature(String keyId, String value) {
    }

    private static final RecordSigning OFF = new RecordSigning(Mode.OFF, SigningKeys.none());
    private static final Base64.Encoder BASE64URL = Base64.getUrlEncoder().withoutPadding();

    private final Mode mode;
    private final SigningKeys keys;

    private RecordSigning(Mode mode, SigningKeys keys) {
        this.mode = mode;
        this.keys = keys;
    }

    /** Neither signs nor verifies. */
    public static RecordSigning off() {
        return OFF;
    }

    /** Signs with the ring's current key and requires a valid signature of any key of it. */
    public static RecordSigning require(SigningKeys keys) {
        return of(Mode.REQUIRE, keys);
    }

    /**
     * @throws IllegalArgumentException when {@code mode} signs or verifies and {@code keys} is empty
     */
    public static RecordSigning of(Mode mode, SigningKeys keys) {
        Objects.requireNonNull(mode, "mode");
        if (mode == Mode.OFF) {
            return OFF;
        }
        if (keys.isEmpty()) {
            throw new IllegalArgumentException("mode " + mode + " needs at least one key");
        }
        return new RecordSigning(mode, keys);
    }

    public Mode mode() {
        return mode;
    }

    public SigningKeys keys() {
        return keys;
    }

    /**
     * The signature of a record, or null in {@link Mode#OFF}.
     *
     * @param header the value of the record's last header of a name, or null when it has none
     */
    Signature sign(String topic, byte[] key, byte[] value, Function<String, byte[]> header) {
        if (mode == Mode.OFF) {
            return null;
        }
        return new Signature(keys.current(), BASE64URL.encodeToString(keys.sign(SignedContent.of(topic, key, value,
                header))));
    }

    /**
     * Adds the signature headers ({@link WireFormat#SIGNATURE_KEY}, {@link WireFormat#SIGNATURE}) to {@code record}
     * as it is about to be sent, over its topic, key, value and headers; does nothing in {@link Mode#OFF}.
     */
    public void sign(ProducerRecord<String, byte[]> record) {
        Signature signature = sign(record.topic(), utf8(record.key()), record.value(), last(record.headers()));
        if (signature != null) {
            record.headers().add(WireFormat.SIGNATURE_KEY, utf8(signature.keyId()));
            record.headers().add(WireFormat.SIGNATURE, utf8(signature.value()));
        }
    }

    /** Checks a record as it arrived, on the topic it arrived on. */
    public Verdict verify(ConsumerRecord<String, byte[]> record) {
        return verify(record.topic(), utf8(record.key()), record.value(), last(record.headers()));
    }

    private static Function<String, byte[]> last(Headers headers) {
        return name -> {
            Header header = headers.lastHeader(name);
            return header == null ? null : header.value();
        };
    }

    private static byte[] utf8(String text) {
        return text == null ? null : text.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Checks a record as it arrived: its signature and key id are read through {@code header} like every covered
     * header (the last one of a name counts).
     */
    Verdict verify(String topic, byte[] key, byte[] value, Function<String, byte[]> header) {
        if (mode == Mode.OFF) {
            return Verdict.NOT_CHECKED;
        }
        byte[] signature = header.apply(WireFormat.SIGNATURE);
        byte[] keyId = header.apply(WireFormat.SIGNATURE_KEY);
        if (signature == null && keyId == null) {
            return mode == Mode.VERIFY_IF_PRESENT ? Verdict.UNSIGNED : Verdict.MISSING;
        }
        if (signature == null || keyId == null) {
            return Verdict.MISSING;
        }
        String id = new String(keyId, StandardCharsets.UTF_8);
        if (!keys.ids().contains(id)) {
            return Verdict.UNKNOWN_KEY;
        }
        byte[] decoded;
        try {
            decoded = Base64.getUrlDecoder().decode(signature);
        } catch (IllegalArgumentException e) {
            return Verdict.INVALID;
        }
        return keys.verify(id, SignedContent.of(topic, key, value, header), decoded) ? Verdict.VALID : Verdict.INVALID;
    }

    /** For logs and health: the mode, the signing key's id and the ids that verify; never a secret. */
    public String describe() {
        return mode == Mode.OFF ? "off: records are neither signed nor verified"
                : mode.name().toLowerCase().replace('_', '-') + (keys.current() == null ? ", not signing (public keys "
                        + "only)" : ", signing with key " + keys.current()) + ", verifying keys "
                        + String.join(", ", keys.ids());
    }

    @Override
    public String toString() {
        return "RecordSigning[" + describe() + "]";
    }
}
