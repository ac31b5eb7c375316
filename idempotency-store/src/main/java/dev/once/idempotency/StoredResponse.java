package dev.once.idempotency;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A response kept for replay: status code, content type, the headers worth replaying (such as {@code Location}) and
 * the body as bytes, since bodies are not always JSON. Immutable: the body is copied in and out.
 *
 * @param bodyOmitted true when the store kept no body because it was over the limit ({@link OversizedResponse#OMIT_BODY})
 */
public record StoredResponse(int statusCode, String contentType, Map<String, String> headers, byte[] body,
                             boolean bodyOmitted) {

    public StoredResponse {
        if (statusCode < 100 || statusCode > 999) {
            throw new IllegalArgumentException("statusCode must be a 3-digit HTTP status, was " + statusCode);
        }
        headers = headers == null ? Map.of() : Map.copyOf(headers);
        body = body == null ? new byte[0] : body.clone();
    }

    public static StoredResponse of(int statusCode, String contentType, byte[] body) {
        return new StoredResponse(statusCode, contentType, Map.of(), body, false);
    }

    public static StoredResponse of(int statusCode, String contentType, String body) {
        return of(statusCode, contentType, body == null ? null : body.getBytes(StandardCharsets.UTF_8));
    }

    /** This response with one more replayable header. */
    public StoredResponse withHeader(String name, String value) {
        Map<String, String> more = new LinkedHashMap<>(headers);
        more.put(name, value);
        return new StoredResponse(statusCode, contentType, more, body, bodyOmitted);
    }

    @Override
    public byte[] body() {
        return body.clone();
    }

    /** Writes the body to {@code out} without copying it (a replay answers with the stored bytes as they are). */
    public void writeBodyTo(OutputStream out) throws IOException {
        out.write(body);
    }

    /** The body decoded as UTF-8. */
    public String bodyAsString() {
        return new String(body, StandardCharsets.UTF_8);
    }

    /** The body's length in bytes, without copying it. */
    public int bodyLength() {
        return body.length;
    }

    byte[] bodyUnsafe() {
        return body;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StoredResponse r && statusCode == r.statusCode && bodyOmitted == r.bodyOmitted
                && Objects.equals(contentType, r.contentType) && headers.equals(r.headers) && Arrays.equals(body, r.body);
    }

    @Override
    public int hashCode() {
        return Objects.hash(statusCode, contentType, headers, Arrays.hashCode(body), bodyOmitted);
    }

    @Override
    public String toString() {
        return "StoredResponse[" + statusCode + " " + contentType + ", " + body.length + " bytes"
                + (bodyOmitted ? ", body omitted" : "") + ", headers=" + headers + "]";
    }
}
