package dev.once.guard;

import dev.once.idempotency.StoredResponse;
import java.util.LinkedHashMap;
import java.util.Map;
import tools.jackson.databind.json.JsonMapper;

/** RFC 9457 problem+json bodies with a stable {@code code}, for responses the guard produces itself. */
public final class Problems {

    public static final String CONTENT_TYPE = "application/problem+json";

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private Problems() {
    }

    public static StoredResponse response(int status, String title, String detail, String code) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("type", "about:blank");
        body.put("title", title);
        body.put("status", status);
        body.put("detail", detail);
        body.put("code", code);
        return response(status, body);
    }

    /** A problem response with {@code members} as its JSON object, in their order. */
    public static StoredResponse response(int status, Map<String, Object> members) {
        return StoredResponse.of(status, CONTENT_TYPE, JSON.writeValueAsBytes(members));
    }
}
