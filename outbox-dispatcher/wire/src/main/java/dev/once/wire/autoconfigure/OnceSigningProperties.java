package dev.once.wire.autoconfigure;

import dev.once.wire.RecordSigning;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code once.outbox.signing.*}: the key ring the relay signs records with and the dispatcher verifies them with.
 * Every service that relays or consumes Once's records must hold the same ring.
 */
@ConfigurationProperties("once.outbox.signing")
public class OnceSigningProperties {

    /**
     * REQUIRE (the default once a key is configured): every record the dispatcher handles must carry a valid
     * signature. VERIFY_IF_PRESENT: unsigned records are handled, signed ones must verify (for a migration period).
     * OFF: nothing is signed or verified, and must be chosen explicitly.
     */
    private RecordSigning.Mode mode;

    /**
     * Key id to secret (at least 32 bytes, e.g. from `openssl rand -base64 32`). Every key verifies; the current key
     * signs. Never logged or shown.
     */
    private Map<String, String> keys = new LinkedHashMap<>();

    /** The id of the key that signs; may be left out when there is one key that can sign. */
    private String currentKey;

    /** Ed25519 key pairs: relays sign with a private key, consumers verify with public keys only. */
    private final Ed25519 ed25519 = new Ed25519();

    public Ed25519 getEd25519() {
        return ed25519;
    }

    /** {@code once.outbox.signing.ed25519.*}: asymmetric keys, beside or instead of the HMAC secrets of {@code keys}. */
    public static class Ed25519 {

        /**
         * Key id to public key (PEM or base64 DER, `openssl pkey -in private.pem -pubout`). Every service that
         * consumes holds these; a public key verifies and cannot sign.
         */
        private Map<String, String> publicKeys = new LinkedHashMap<>();

        /**
         * Key id to private key (PEM or base64 PKCS#8, `openssl genpkey -algorithm ed25519`): only where records are
         * signed, the relays. Its public key must be in public-keys too. Never logged or shown.
         */
        private Map<String, String> privateKeys = new LinkedHashMap<>();

        public Map<String, String> getPublicKeys() {
            return publicKeys;
        }

        public void setPublicKeys(Map<String, String> publicKeys) {
            this.publicKeys = publicKeys;
        }

        public Map<String, String> getPrivateKeys() {
            return privateKeys;
        }

        public void setPrivateKeys(Map<String, String> privateKeys) {
            this.privateKeys = privateKeys;
        }
    }

    public RecordSigning.Mode getMode() {
        return mode;
    }

    public void setMode(RecordSigning.Mode mode) {
        this.mode = mode;
    }

    public Map<String, String> getKeys() {
        return keys;
    }

    public void setKeys(Map<String, String> keys) {
        this.keys = keys;
    }

    public String getCurrentKey() {
        return currentKey;
    }

    public void setCurrentKey(String currentKey) {
        this.currentKey = currentKey;
    }
}
