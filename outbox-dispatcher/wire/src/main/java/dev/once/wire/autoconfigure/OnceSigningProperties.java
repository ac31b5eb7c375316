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

    /** The id of the key that signs; may be left out when there is one key. */
    private String currentKey;

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
