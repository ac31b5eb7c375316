package dev.once.idempotency;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
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
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();

    private JsonCanonicalizer() {
    }

    /**
     * The canonical form of {@code json}, or null when it holds no JSON value at all (only whitespace); throws
     * Jackson's exception for anything else that is not one JSON value.
     */
    static String canonicalize(byte[] json) {
        JsonNode root = MAPPER.readTree(json);
        if (root == null || root.isMissingNode()) {
            return null;
        }
        StringBuilder out = new StringBuilder(json.length);
        write(root, out);
        return out.toString();
    }

    private static void write(JsonNode node, StringBuilder out) {
        switch (node.getNodeType()) {
            case OBJECT -> writeObject(node, out);
            case ARRAY -> {
                out.append('[');
                boolean first = true;
                for (JsonNode element : node.values()) {
                    if (!first) {
                        out.append(',');
                    }
                    first = false;
                    write(element, out);
                }
                out.append(']');
            }
            case STRING -> writeString(node.stringValue(), out);
            case NUMBER -> out.append(number(node.decimalValue()));
            case BOOLEAN -> out.append(node.booleanValue());
            case NULL -> out.append("null");
            default -> throw new IllegalArgumentException("Not a JSON value: " + node.getNodeType());
        }
    }

    private static void writeObject(JsonNode node, StringBuilder out) {
        List<Map.Entry<String, JsonNode>> members = new ArrayList<>(node.properties());
        members.sort(Map.Entry.comparingByKey()); // String order is UTF-16 code-unit order, as RFC 8785 requires
        out.append('{');
        for (int i = 0; i < members.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            writeString(members.get(i).getKey(), out);
            out.append(':');
            write(members.get(i).getValue(), out);
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
