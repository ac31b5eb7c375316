package dev.once.wire;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A consumer in any language can verify: the Ed25519 signature Once puts on a record verifies with the {@code openssl}
 * command line, given the record's canonical form (docs/WIRE.md) and the public key; a changed form does not.
 */
class OpensslSignatureIT {

    @TempDir
    Path dir;

    @Test
    void openssl_verifies_the_ed25519_signature_of_a_record_and_refuses_a_changed_one() throws Exception {
        KeyPair pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        String publicPem = pem("PUBLIC KEY", pair.getPublic().getEncoded());
        SigningKeys ring = SigningKeys.builder().ed25519("relay-1", publicPem,
                pem("PRIVATE KEY", pair.getPrivate().getEncoded())).build();
        ProducerRecord<String, byte[]> record = new ProducerRecord<>("once.order", "o-1",
                "{\"order\":1}".getBytes(StandardCharsets.UTF_8));
        record.headers().add(WireFormat.EVENT_ID, "0190a8c2-7b3e-7c1a-9f2e-3b4c5d6e7f80".getBytes(StandardCharsets.UTF_8));
        record.headers().add(WireFormat.TENANT_ID, "acme".getBytes(StandardCharsets.UTF_8));
        record.headers().add(WireFormat.EVENT_TYPE, "OrderPlaced".getBytes(StandardCharsets.UTF_8));
        RecordSigning.require(ring).sign(record);

        byte[] form = SignedContent.of(record.topic(), record.key().getBytes(StandardCharsets.UTF_8), record.value(),
                name -> record.headers().lastHeader(name) == null ? null : record.headers().lastHeader(name).value());
        Files.write(dir.resolve("form.bin"), form);
        Files.write(dir.resolve("sig.bin"), Base64.getUrlDecoder().decode(
                record.headers().lastHeader(WireFormat.SIGNATURE).value()));
        Files.writeString(dir.resolve("pub.pem"), publicPem);
        assertThat(openssl()).as("openssl pkeyutl -verify").contains("Signature Verified Successfully");

        form[form.length - 1] ^= 1;
        Files.write(dir.resolve("form.bin"), form);
        assertThat(openssl()).contains("Signature Verification Failure");
    }

    private String openssl() throws IOException, InterruptedException {
        Process process = new ProcessBuilder("openssl", "pkeyutl", "-verify", "-pubin", "-inkey", "pub.pem", "-rawin",
                "-in", "form.bin", "-sigfile", "sig.bin").directory(dir.toFile()).redirectErrorStream(true).start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(der) + "\n-----END " + type + "-----\n";
    }
}
