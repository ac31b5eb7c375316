package dev.once.wire;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.function.Function;

/**
 * The canonical form a signature is computed over: a version tag, then the topic, the key, each header of
 * {@link WireFormat#SIGNED_HEADERS} and the SHA-256 of the payload, each as a 4-byte big-endian length (-1 for
 * absent) and its bytes. Lengths make it unambiguous: no two different records share a form, whatever bytes their
 * fields hold. Other headers (tracing, Kafka's own, the dead-letter ones) and their order are not part of it.
 */
final class SignedContent {

    static final byte[] VERSION = "once-signature-v1".getBytes(StandardCharsets.US_ASCII);

    private SignedContent() {
    }

    /**
     * @param header the value of the last header of a name, or null when the record has none
     */
    static byte[] of(String topic, byte[] key, byte[] value, Function<String, byte[]> header) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256);
        field(out, VERSION);
        field(out, topic == null ? null : topic.getBytes(StandardCharsets.UTF_8));
        field(out, key);
        for (String name : WireFormat.SIGNED_HEADERS) {
            field(out, header.apply(name));
        }
        field(out, value == null ? null : sha256(value));
        return out.toByteArray();
    }

    private static void field(ByteArrayOutputStream out, byte[] bytes) {
        int length = bytes == null ? -1 : bytes.length;
        out.write(length >>> 24);
        out.write(length >>> 16);
        out.write(length >>> 8);
        out.write(length);
        if (bytes != null) {
            out.writeBytes(bytes);
        }
    }

    /** Cloned for each digest: cheaper than looking the algorithm up among the providers every time. */
    private static final MessageDigest SHA_256;

    static {
        try {
            SHA_256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("Every Java platform has SHA-256", e);
        }
    }

    private static byte[] sha256(byte[] value) {
        try {
            return ((MessageDigest) SHA_256.clone()).digest(value);
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException("The platform's SHA-256 cannot be cloned", e);
        }
    }
}
