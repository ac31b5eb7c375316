package dev.once.wire;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.InvalidKeyException;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A key ring for {@link RecordSigning}: key id → key. The current key signs; every key of the ring verifies, so that
 * keys rotate without downtime (add the new key everywhere, make it current, remove the old one once no record it
 * signed can be delivered again). Two kinds of key:
 * <ul>
 * <li><b>HMAC-SHA256</b>, a shared secret (the UTF-8 bytes of its text, at least {@link #MIN_SECRET_BYTES}): whoever
 * can verify can also sign.</li>
 * <li><b>Ed25519</b>, a key pair: relays hold the private key and sign; consumers hold only the public key, verify, and
 * cannot sign. Keys are PEM or base64 DER, as {@code openssl genpkey -algorithm ed25519} and
 * {@code openssl pkey -pubout} write them (PKCS#8 private, X.509 SubjectPublicKeyInfo public).</li>
 * </ul>
 * Immutable and thread-safe; no method, {@link #toString()} included, ever returns a secret or a private key.
 */
public final class SigningKeys {

    /** The shortest HMAC secret accepted: 256 bits, the strength of HMAC-SHA256. */
    public static final int MIN_SECRET_BYTES = 32;

    static final String ALGORITHM = "HmacSHA256";
    static final String ED25519 = "Ed25519";
    private static final Pattern KEY_ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    private static final SigningKeys NONE = new SigningKeys(Map.of(), null);

    /** One key of the ring: what signs and verifies with it. */
    private sealed interface Key permits Hmac, Ed25519Key {
        boolean canSign();

        byte[] sign(byte[] content);

        boolean verify(byte[] content, byte[] signature);
    }

    private record Hmac(Mac prototype) implements Key {
        public boolean canSign() {
            return true;
        }

        public byte[] sign(byte[] content) {
            try {
                return ((Mac) prototype.clone()).doFinal(content);
            } catch (CloneNotSupportedException e) {
                throw new IllegalStateException("The platform's " + ALGORITHM + " cannot be cloned", e);
            }
        }

        public boolean verify(byte[] content, byte[] signature) {
            return MessageDigest.isEqual(sign(content), signature);
        }
    }

    private record Ed25519Key(PublicKey publicKey, PrivateKey privateKey) implements Key {
        public boolean canSign() {
            return privateKey != null;
        }

        public byte[] sign(byte[] content) {
            try {
                Signature signature = Signature.getInstance(ED25519);
                signature.initSign(privateKey);
                signature.update(content);
                return signature.sign();
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("Every Java platform since 15 has " + ED25519, e);
            }
        }

        public boolean verify(byte[] content, byte[] signature) {
            try {
                Signature verifier = Signature.getInstance(ED25519);
                verifier.initVerify(publicKey);
                verifier.update(content);
                return verifier.verify(signature);
            } catch (java.security.SignatureException e) {
                return false; // not a signature of this length or form
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("Every Java platform since 15 has " + ED25519, e);
            }
        }
    }

    private final Map<String, Key> keys;
    private final String current;

    private SigningKeys(Map<String, Key> keys, String current) {
        this.keys = keys;
        this.current = current;
    }

    /** No keys: nothing can be signed or verified. */
    public static SigningKeys none() {
        return NONE;
    }

    /**
     * A ring of HMAC secrets.
     *
     * @param secrets key id → secret
     * @param current the id of the key that signs; may be null when the ring holds exactly one key
     * @throws IllegalArgumentException naming the key id (never the secret) that is malformed or too short, or when
     *         the current key is missing or not in the ring
     */
    public static SigningKeys of(Map<String, String> secrets, String current) {
        Builder builder = builder();
        secrets.forEach(builder::hmac);
        return builder.current(current).build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Builds a ring of HMAC and Ed25519 keys; {@link #build()} validates it. */
    public static final class Builder {
        private final Map<String, Key> keys = new LinkedHashMap<>();
        private String current;

        private Builder() {
        }

        /** An HMAC-SHA256 key: its secret's UTF-8 bytes, at least {@link #MIN_SECRET_BYTES}. */
        public Builder hmac(String id, String secret) {
            byte[] bytes = secret == null ? new byte[0] : secret.getBytes(StandardCharsets.UTF_8);
            if (bytes.length < MIN_SECRET_BYTES) {
                throw new IllegalArgumentException("the secret of key '" + id + "' has " + bytes.length
                        + " bytes; a key needs at least " + MIN_SECRET_BYTES + " (for example `openssl rand -base64 32`)");
            }
            return put(id, new Hmac(mac(bytes)));
        }

        /**
         * An Ed25519 key: its public key, which verifies, and its private key, which signs, or {@code null} where
         * this service only verifies.
         */
        public Builder ed25519(String id, String publicKey, String privateKey) {
            if (publicKey == null || publicKey.isBlank()) {
                throw new IllegalArgumentException("Ed25519 key '" + id + "' has no public key; every Ed25519 key of "
                        + "the ring needs one (openssl pkey -in private.pem -pubout)");
            }
            try {
                KeyFactory factory = KeyFactory.getInstance(ED25519);
                PublicKey pub = factory.generatePublic(new X509EncodedKeySpec(der(publicKey)));
                PrivateKey priv = privateKey == null || privateKey.isBlank() ? null
                        : factory.generatePrivate(new PKCS8EncodedKeySpec(der(privateKey)));
                return put(id, new Ed25519Key(pub, priv));
            } catch (GeneralSecurityException | IllegalArgumentException e) {
                throw new IllegalArgumentException("Ed25519 key '" + id + "' is not a PEM or base64 DER Ed25519 key "
                        + "(public: X.509 SubjectPublicKeyInfo, private: PKCS#8, as openssl writes them)");
            }
        }

        /** The id of the key that signs; may be left out when exactly one key of the ring can sign. */
        public Builder current(String id) {
            this.current = id == null || id.isBlank() ? null : id;
            return this;
        }

        public SigningKeys build() {
            if (keys.isEmpty()) {
                throw new IllegalArgumentException("the key ring is empty");
            }
            var signers = keys.entrySet().stream().filter(e -> e.getValue().canSign()).map(Map.Entry::getKey).toList();
            if (current == null && signers.size() > 1) {
                throw new IllegalArgumentException("the key ring holds " + signers + " that can sign; name the one that "
                        + "signs");
            }
            if (current != null && !keys.containsKey(current)) {
                throw new IllegalArgumentException("the current key '" + current + "' is not in the key ring "
                        + keys.keySet());
            }
            if (current != null && !keys.get(current).canSign()) {
                throw new IllegalArgumentException("the current key '" + current + "' is an Ed25519 public key; only "
                        + "its private key signs");
            }
            String signing = current != null ? current : signers.isEmpty() ? null : signers.get(0);
            return new SigningKeys(Collections.unmodifiableMap(new LinkedHashMap<>(keys)), signing);
        }

        private Builder put(String id, Key key) {
            if (id == null || !KEY_ID.matcher(id).matches()) {
                throw new IllegalArgumentException("key id '" + id + "' is not 1 to 64 letters, digits, '.', '_' or '-'");
            }
            if (keys.putIfAbsent(id, key) != null) {
                throw new IllegalArgumentException("key id '" + id + "' is in the ring twice");
            }
            return this;
        }
    }

    /**
     * The id of the key that signs; {@code null} for {@link #none()} and for a ring of Ed25519 public keys only, which
     * verifies and cannot sign.
     */
    public String current() {
        return current;
    }

    /** The ids of every key that verifies, in the order they were given. */
    public Set<String> ids() {
        return keys.keySet();
    }

    public boolean isEmpty() {
        return keys.isEmpty();
    }

    /** Signs {@code content} with the current key. */
    byte[] sign(byte[] content) {
        if (current == null) {
            throw new IllegalStateException("this key ring cannot sign: it holds Ed25519 public keys only (a consumer's "
                    + "ring); a relay needs the private key of the key it signs with");
        }
        return keys.get(current).sign(content);
    }

    /** Whether {@code signature} is key {@code id}'s over {@code content}; false for a key not in the ring. */
    boolean verify(String id, byte[] content, byte[] signature) {
        Key key = keys.get(id);
        return key != null && key.verify(content, signature);
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

    /** PEM (any {@code -----BEGIN …-----} armour) or bare base64, to DER bytes. */
    private static byte[] der(String text) {
        String body = text.replaceAll("-----(BEGIN|END) [A-Z ]+-----", "").replaceAll("\\s", "");
        return Base64.getDecoder().decode(body);
    }

    @Override
    public String toString() {
        return "SigningKeys[current=" + current + ", ids=" + keys.keySet() + "]";
    }
}
