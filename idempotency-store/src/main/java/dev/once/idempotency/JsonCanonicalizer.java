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
     * Jackson's exception for anything else that is not one JSON value. Reads the tokens into a minimal tree (scalars
     * as their canonical text, objects as sorted members, arrays as lists) and writes it once: every guarded request
     * with a JSON body comes through here.
     */
    static String canonicalize(byte[] json) {
        try (JsonParser parser = MAPPER.createParser(json)) {
            JsonToken first = parser.nextToken();
            if (first == null) {
                return null;
            }
            Object root = read(parser, first);
            if (parser.nextToken() != null) {
                throw new StreamReadException(parser, "Trailing token after the JSON value: " + parser.currentToken());
            }
            StringBuilder out = new StringBuilder(json.length);
            write(root, out);
            return out.toString();
        }
    }

    /** An object's members, sorted by name (the parser refuses duplicate names). */
    private record Members(List<Map.Entry<String, Object>> sorted) {
    }

    /** A scalar as its canonical text ({@code String}), an object as {@link Members}, an array as a {@code List}. */
    private static Object read(JsonParser parser, JsonToken token) {
        switch (token) {
            case START_OBJECT -> {
                List<Map.Entry<String, Object>> members = new ArrayList<>();
                for (String name = parser.nextName(); name != null; name = parser.nextName()) {
                    members.add(Map.entry(name, read(parser, parser.nextToken())));
                }
                members.sort(Map.Entry.comparingByKey()); // String order is UTF-16 code-unit order, as RFC 8785 requires
                return new Members(members);
            }
            case START_ARRAY -> {
                List<Object> elements = new ArrayList<>();
                for (JsonToken element = parser.nextToken(); element != JsonToken.END_ARRAY; element = parser.nextToken()) {
                    elements.add(read(parser, element));
                }
                return elements;
            }
            case VALUE_STRING -> {
                StringBuilder text = new StringBuilder();
                writeString(parser.getString(), text);
                return text.toString();
            }
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> {
                return number(parser.getDecimalValue());
            }
            case VALUE_TRUE -> {
                return "true";
            }
            case VALUE_FALSE -> {
                return "false";
            }
            case VALUE_NULL -> {
                return "null";
            }
            default -> throw new StreamReadException(parser, "Not a JSON value: " + token);
        }
    }

    private static void write(Object node, StringBuilder out) {
        if (node instanceof String text) {
            out.append(text);
        } else if (node instanceof Members members) {
            out.append('{');
            List<Map.Entry<String, Object>> sorted = members.sorted();
            for (int i = 0; i < sorted.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                writeString(sorted.get(i).getKey(), out);
                out.append(':');
                write(sorted.get(i).getValue(), out);
            }
            out.append('}');
        } else {
            out.append('[');
            List<?> elements = (List<?>) node;
            for (int i = 0; i < elements.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                write(elements.get(i), out);
            }
            out.append(']');
        }
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
