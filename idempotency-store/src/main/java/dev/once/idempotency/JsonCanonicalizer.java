package dev.once.idempotency;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.exc.StreamReadException;
import tools.jackson.databind.json.JsonMapper;

/**
 * A canonical text form of JSON in the spirit of RFC 8785: object members sorted by UTF-16 code units, no
 * insignificant whitespace, minimal string escapes, and one spelling per number. Numbers are kept exact (as decimals,
 * never through {@code double}), and written as {@code <unscaled>e<exponent>} with trailing zeros stripped, so
 * {@code 1}, {@code 1.0}, {@code 1e0} and {@code 10E-1} are one value while 64-bit ids never lose precision.
 * Thread-safe.
 */
final class JsonCanonicalizer {

    private static final JsonMapper MAPPER = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();

    private JsonCanonicalizer() {
    }

    /**
     * The canonical form of {@code json}, or null when it holds no JSON value at all (only whitespace); throws
     * Jackson's exception for anything else that is not one JSON value. Streams the tokens (no tree): every guarded
     * request with a JSON body comes through here.
     */
    static String canonicalize(byte[] json) {
        try (JsonParser parser = MAPPER.createParser(json)) {
            JsonToken first = parser.nextToken();
            if (first == null) {
                return null;
            }
            StringBuilder out = new StringBuilder(json.length);
            write(parser, first, out);
            if (parser.nextToken() != null) {
                throw new StreamReadException(parser, "Trailing token after the JSON value: " + parser.currentToken());
            }
            return out.toString();
        }
    }

    private static void write(JsonParser parser, JsonToken token, StringBuilder out) {
        switch (token) {
            case START_OBJECT -> writeObject(parser, out);
            case START_ARRAY -> {
                out.append('[');
                boolean first = true;
                for (JsonToken element = parser.nextToken(); element != JsonToken.END_ARRAY; element = parser.nextToken()) {
                    if (!first) {
                        out.append(',');
                    }
                    first = false;
                    write(parser, element, out);
                }
                out.append(']');
            }
            case VALUE_STRING -> writeString(parser.getString(), out);
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> out.append(number(parser.getDecimalValue()));
            case VALUE_TRUE -> out.append("true");
            case VALUE_FALSE -> out.append("false");
            case VALUE_NULL -> out.append("null");
            default -> throw new StreamReadException(parser, "Not a JSON value: " + token);
        }
    }

    /** Members are written to text first, then sorted by name; the parser refuses duplicate names. */
    private static void writeObject(JsonParser parser, StringBuilder out) {
        List<Map.Entry<String, String>> members = new ArrayList<>();
        for (String name = parser.nextName(); name != null; name = parser.nextName()) {
            StringBuilder value = new StringBuilder();
            write(parser, parser.nextToken(), value);
            members.add(Map.entry(name, value.toString()));
        }
        members.sort(Map.Entry.comparingByKey()); // String order is UTF-16 code-unit order, as RFC 8785 requires
        out.append('{');
        for (int i = 0; i < members.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            writeString(members.get(i).getKey(), out);
            out.append(':').append(members.get(i).getValue());
        }
        out.append('}');
    }

    static String number(BigDecimal value) {
        if (value.signum() == 0) {
            return "0";
        }
        BigDecimal stripped = value.stripTrailingZeros();
        return stripped.unscaledValue() + "e" + (-stripped.scale());
    }

    private static void writeString(String value, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
