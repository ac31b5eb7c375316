package dev.once.wire;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.NoSuchAlgorithmException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A key ring for {@link RecordSigning}: key id → secret. The current key signs; every key of the ring verifies, so
 * that keys rotate without downtime (add the new key everywhere, make it current, remove the old one once no record
 * it signed can be delivered again). Secrets are the UTF-8 bytes of their text, at least {@link #MIN_SECRET_BYTES}.
 * Immutable and thread-safe; no method, {@link #toString()} included, ever returns a secret.
 */
public final class SigningKeys {

    /** The shortest secret accepted: 256 bits, the strength of HMAC-SHA256. */
    public static final int MIN_SECRET_BYTES = 32;

    static final String ALGORITHM = "HmacSHA256";
    private static final Pattern KEY_ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    private static final SigningKeys NONE = new SigningKeys(Map.of(), null);

    private final Map<String, Mac> macs;
    private final String current;

    private SigningKeys(Map<String, Mac> macs, String current) {
        this.macs = macs;
        this.current = current;
    }

    /** No keys: nothing can be signed or verified. */
    public static SigningKeys none() {
        return NONE;
    }

    /**
     * @param secrets key id → secret
     * @param current the id of the key that signs; may be null when the ring holds exactly one key
     * @throws IllegalArgumentException naming the key id (never the secret) that is malformed or too short, or when
     *         the current key is missing or not in the ring
     */
    public static SigningKeys of(Map<String, String> secrets, String current) {
        if (secrets.isEmpty()) {
            throw new IllegalArgumentException("the key ring is empty");
        }
        Map<String, Mac> macs = new LinkedHashMap<>();
        for (Map.Entry<String, String> entry : secrets.entrySet()) {
            String id = entry.getKey();
            if (id == null || !KEY_ID.matcher(id).matches()) {
                throw new IllegalArgumentException("key id '" + id + "' is not 1 to 64 letters, digits, '.', '_' or '-'");
            }
            byte[] secret = entry.getValue() == null ? new byte[0] : entry.getValue().getBytes(StandardCharsets.UTF_8);
            if (secret.length < MIN_SECRET_BYTES) {
                throw new IllegalArgumentException("the secret of key '" + id + "' has " + secret.length
                        + " bytes; a key needs at least " + MIN_SECRET_BYTES + " (for example `openssl rand -base64 32`)");
            }
            macs.put(id, mac(secret));
        }
        String signing = current == null || current.isBlank() ? null : current;
        if (signing == null && macs.size() > 1) {
            throw new IllegalArgumentException("the key ring holds " + macs.keySet() + "; name the one that signs");
        }
        if (signing != null && !macs.containsKey(signing)) {
            throw new IllegalArgumentException("the current key '" + signing + "' is not in the key ring " + macs.keySet());
        }
        return new SigningKeys(Collections.unmodifiableMap(macs), signing == null ? macs.keySet().iterator().next() : signing);
    }

    /** The id of the key that signs, or null for {@link #none()}. */
    public String current() {
        return current;
    }

    /** The ids of every key that verifies, in the order they were given. */
    public Set<String> ids() {
        return macs.keySet();
    }

    public boolean isEmpty() {
        return macs.isEmpty();
    }

    /** A fresh MAC of key {@code id}, or null when the ring has no such key. */
    Mac mac(String id) {
        Mac prototype = macs.get(id);
        if (prototype == null) {
            return null;
        }
        try {
            return (Mac) prototype.clone();
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException("The platform's " + ALGORITHM + " cannot be cloned", e);
        }
    }

    private static Mac mac(byte[] secret) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(new SecretKeySpec(secret, ALGORITHM));
            return mac;
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException("Every Java platform has " + ALGORITHM, e);
        }
    }

    @Override
    public String toString() {
        return "SigningKeys[current=" + current + ", ids=" + macs.keySet() + "]";
    }
}
