package dev.once.idempotency;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Map;
import java.util.UUID;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/** Reads and writes the columns that several statements share. Stateless and thread-safe. */
final class RecordColumns {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final TypeReference<Map<String, String>> HEADERS = new TypeReference<>() { };

    private RecordColumns() {
    }

    static Instant instant(ResultSet rs, String column) throws SQLException {
        OffsetDateTime value = rs.getObject(column, OffsetDateTime.class);
        return value == null ? null : value.toInstant();
    }

    static UUID uuid(ResultSet rs, String column) throws SQLException {
        return rs.getObject(column, UUID.class);
    }

    /** The stored response, or {@code null} when the row has none ({@code response_code} is null). */
    static StoredResponse response(ResultSet rs) throws SQLException {
        int code = rs.getInt("response_code");
        if (rs.wasNull()) {
            return null;
        }
        String headers = rs.getString("response_headers");
        return new StoredResponse(code, rs.getString("response_content_type"),
                headers == null ? Map.of() : JSON.readValue(headers, HEADERS),
                rs.getBytes("response_body"), rs.getBoolean("response_body_omitted"));
    }

    /** The headers as a JSON object for a {@code jsonb} column, or {@code null} for none. */
    static String headersJson(Map<String, String> headers) {
        return headers.isEmpty() ? null : JSON.writeValueAsString(headers);
    }

    static IdempotencyScope scope(ResultSet rs) throws SQLException {
        return IdempotencyScope.of(rs.getString("tenant_id"), rs.getString("user_id"),
                Route.of(rs.getString("route")), rs.getString("idempotency_key"));
    }
}
