package dev.once.idempotency;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;

/**
 * The request hash stored with a claim: SHA-256 over a canonical form of method, route and body, prefixed with its
 * algorithm version ({@code v1:}), so the algorithm can change later without breaking stored keys.
 *
 * <p>A JSON body (a media type of {@code application/json} or {@code *+json}) is hashed in its canonical form (see
 * {@link JsonCanonicalizer}): member order, insignificant whitespace and number spelling do not change the hash,
 * while any change of value does. A body that claims to be JSON and is not exactly representable I-JSON is refused
 * with a {@link RequestBodyException} (the client's error, answered 400 before anything is claimed); an empty or
 * whitespace-only body, and a body of any other media type, is hashed byte for byte. Thread-safe and free of I/O.
 */
public final class RequestFingerprint {

    /** The prefix of every hash this version computes. */
    public static final String VERSION_PREFIX = "v1:";

    private static final byte[] EMPTY = new byte[0];
    private static final MessageDigest PROTOTYPE = newSha256();

    private RequestFingerprint() {
    }

    /**
     * The fingerprint of an HTTP request.
     *
     * @param contentType the request's Content-Type, or {@code null}
     * @param body the request body, or {@code null} for none
     * @throws RequestBodyException when a JSON body has no exact canonical form
     */
    public static String of(String method, Route route, String contentType, byte[] body) {
        return of(method, route, null, contentType, body);
    }

    /**
     * The fingerprint of an HTTP request that also covers its concrete target: {@code target} is the request path
     * with its parameters in a canonical order (e.g. {@code /accounts/42/withdrawals?amount=10}), so the same key
     * reused on {@code /accounts/43/withdrawals}, or with other parameters, is a conflict and never a replay.
     */
    public static String of(String method, Route route, String target, String contentType, byte[] body) {
        String head = "method=" + (method == null ? "" : method.toUpperCase(Locale.ROOT)) + "\nroute=" + route.value()
                + (target == null ? "" : "\ntarget=" + target);
        return hash(head, isJson(contentType), body == null ? EMPTY : body);
    }

    /**
     * The fingerprint of a JSON document under {@code route}, e.g. an event payload under its handler route.
     *
     * @throws RequestBodyException when the document has no exact canonical form
     */
    public static String ofJson(Route route, byte[] json) {
        return hash("route=" + route.value(), true, json == null ? EMPTY : json);
    }

    /**
     * The fingerprint of an event's payload under {@code route}: a JSON payload as {@link #ofJson} (canonicalised), a
     * payload of any other media type byte for byte.
     *
     * @throws RequestBodyException when a JSON payload has no exact canonical form
     */
    public static String ofPayload(Route route, String contentType, byte[] payload) {
        return hash("route=" + route.value(), isJson(contentType), payload == null ? EMPTY : payload);
    }

    /**
     * An event's payload made ready to be fingerprinted under several routes: canonicalised once, then hashed per
     * route ({@link Payload#under}), with the same result as {@link #ofPayload} for each.
     *
     * @throws RequestBodyException when a JSON payload has no exact canonical form
     */
    public static Payload payload(String contentType, byte[] payload) {
        byte[] body = payload == null ? EMPTY : payload;
        String canonical = isJson(contentType) ? canonicalOrNull(body) : null;
        return new Payload(canonical, body);
    }

    /** A payload canonicalised once ({@link #payload}); thread-safe. */
    public static final class Payload {
        private final String canonical;
        private final byte[] body;

        private Payload(String canonical, byte[] body) {
            this.canonical = canonical;
            this.body = body;
        }

        /** The fingerprint of this payload under {@code route}: what {@link #ofPayload} gives. */
        public String under(Route route) {
            return digest("route=" + route.value(), canonical, body);
        }
    }

    private static String hash(String head, boolean json, byte[] body) {
        return digest(head, json ? canonicalOrNull(body) : null, body);
    }

    private static String digest(String head, String canonical, byte[] body) {
        MessageDigest sha256 = sha256();
        sha256.update(head.getBytes(StandardCharsets.UTF_8));
        if (canonical != null) {
            sha256.update("\njson=".getBytes(StandardCharsets.UTF_8));
            sha256.update(canonical.getBytes(StandardCharsets.UTF_8));
        } else {
            sha256.update("\nbytes=".getBytes(StandardCharsets.UTF_8));
            sha256.update(body);
        }
        return VERSION_PREFIX + HexFormat.of().formatHex(sha256.digest());
    }

    /** The canonical form, or null for a body without a JSON value (empty or whitespace), hashed as its bytes. */
    private static String canonicalOrNull(byte[] body) {
        return body.length == 0 ? null : JsonCanonicalizer.canonicalize(body);
    }

    static boolean isJson(String contentType) {
        if (contentType == null) {
            return false;
        }
        int semicolon = contentType.indexOf(';');
        String mediaType = (semicolon < 0 ? contentType : contentType.substring(0, semicolon)).trim().toLowerCase(Locale.ROOT);
        return mediaType.equals("application/json") || (mediaType.startsWith("application/") && mediaType.endsWith("+json"));
    }

    /** A fresh digest, cloned from a prototype: cheaper than a provider look-up on every request. */
    private static MessageDigest sha256() {
        try {
            return (MessageDigest) PROTOTYPE.clone();
        } catch (CloneNotSupportedException e) {
            return newSha256();
        }
    }

    private static MessageDigest newSha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("Every Java platform provides SHA-256", e);
        }
    }
}
