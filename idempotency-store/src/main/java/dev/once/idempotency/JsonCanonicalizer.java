package dev.once.idempotency;

import dev.once.idempotency.RequestBodyException.Problem;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.databind.json.JsonMapper;

/**
 * A canonical text form of JSON in the spirit of RFC 8785: object members sorted by UTF-16 code units, no
 * insignificant whitespace, minimal string escapes, and one spelling per number. Numbers are kept exact (as decimals,
 * never through {@code double}), and written as {@code <unscaled>e<exponent>} with trailing zeros stripped, so
 * {@code 1}, {@code 1.0}, {@code 1e0} and {@code 10E-1} are one value while 64-bit ids never lose precision.
 *
 * <p>A total function over the bytes it accepts: every input gets its canonical form, or a
 * {@link RequestBodyException} that says why it has none, and nothing else is thrown. Only I-JSON (RFC 7493) that
 * round-trips exactly is accepted: UTF-8 without unpaired surrogates, unique member names, numbers that a
 * {@link BigDecimal} holds, no U+0000 (which PostgreSQL cannot store), within the parser's limits. Two accepted
 * documents have the same canonical form if and only if they are equal as JSON values (numbers compared by value).
 * Thread-safe.
 */
final class JsonCanonicalizer {

    private static final JsonMapper MAPPER = JsonMapper.builder().build();

    private JsonCanonicalizer() {
    }

    /**
     * The canonical form of {@code json}, or null when it holds no JSON value at all (only whitespace).
     *
     * @throws RequestBodyException for anything else that is not one exactly representable I-JSON value
     */
    static String canonicalize(byte[] json) {
        try (JsonParser parser = MAPPER.createParser(utf8(json))) {
            JsonToken first = parser.nextToken();
            if (first == null) {
                return null;
            }
            Object root = read(parser, first);
            if (parser.nextToken() != null) {
                throw new RequestBodyException(Problem.MALFORMED, "The body is not one JSON text: more follows the "
                        + "first value" + at(parser.currentLocation()));
            }
            StringBuilder out = new StringBuilder(json.length);
            write(root, out);
            return out.toString();
        } catch (StreamConstraintsException e) {
            throw new RequestBodyException(Problem.TOO_COMPLEX, "The JSON body exceeds the parser's limits: "
                    + e.getOriginalMessage());
        } catch (JacksonException e) {
            throw new RequestBodyException(Problem.MALFORMED, "The body is not one JSON text: " + e.getOriginalMessage());
        }
    }

    /** The body as text, refusing anything that is not well-formed UTF-8 (Jackson would guess UTF-16 or UTF-32). */
    private static String utf8(byte[] json) {
        for (byte b : json) {
            if (b < 0) {
                try {
                    return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                            .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(json)).toString();
                } catch (CharacterCodingException e) {
                    throw new RequestBodyException(Problem.INVALID_UNICODE, "The JSON body is not well-formed UTF-8");
                }
            }
        }
        return new String(json, StandardCharsets.US_ASCII);
    }

    /**
     * The value that starts at {@code token}, as a minimal tree written once at the end: an object is a map sorted
     * by member name as read (String order is UTF-16 code-unit order, as RFC 8785 requires) of quoted names and
     * values, an array a list, a scalar its canonical text. Each string is checked as it is read; a member name seen twice is refused.
     */
    private static Object read(JsonParser parser, JsonToken token) {
        switch (token) {
            case START_OBJECT: {
                TreeMap<String, Member> members = new TreeMap<>();
                for (String name = parser.nextName(); name != null; name = parser.nextName()) {
                    Member member = new Member(string(name), read(parser, parser.nextToken()));
                    if (members.put(name, member) != null) {
                        throw new RequestBodyException(Problem.DUPLICATE_MEMBER, "The JSON body has an object with "
                                + "the member name " + member.name() + " twice" + at(parser.currentLocation()));
                    }
                }
                return members;
            }
            case START_ARRAY: {
                List<Object> elements = new ArrayList<>();
                for (JsonToken next = parser.nextToken(); next != JsonToken.END_ARRAY; next = parser.nextToken()) {
                    elements.add(read(parser, next));
                }
                return elements;
            }
            case VALUE_STRING:
                return string(parser.getString());
            case VALUE_NUMBER_INT:
            case VALUE_NUMBER_FLOAT:
                return number(parser.getText());
            case VALUE_TRUE:
                return "true";
            case VALUE_FALSE:
                return "false";
            case VALUE_NULL:
                return "null";
            default:
                throw new RequestBodyException(Problem.MALFORMED, "The body is not one JSON text: unexpected "
                        + token + at(parser.currentLocation()));
        }
    }

    private static String at(TokenStreamLocation location) {
        return location == null ? "" : " (line " + location.getLineNr() + ", column " + location.getColumnNr() + ")";
    }

    @SuppressWarnings("unchecked")
    private static void write(Object node, StringBuilder out) {
        if (node instanceof Map<?, ?> object) {
            out.append('{');
            boolean first = true;
            for (Member member : ((Map<String, Member>) object).values()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                out.append(member.name()).append(':');
                write(member.value(), out);
            }
            out.append('}');
        } else if (node instanceof List<?> array) {
            out.append('[');
            for (int i = 0; i < array.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                write(array.get(i), out);
            }
            out.append(']');
        } else {
            out.append((String) node);
        }
    }

    /** The largest exponent of a normalised decimal that a {@link BigDecimal} holds (its scale is an int). */
    private static final long MAX_EXPONENT = -(long) Integer.MIN_VALUE;
    private static final long MIN_EXPONENT = -(long) Integer.MAX_VALUE;

    /**
     * The canonical spelling of a JSON number literal: {@code <digits>e<exponent>} with the digits' leading and
     * trailing zeros gone (trailing ones moved into the exponent), {@code 0} for zero. Worked out on the literal's
     * digits, so every spelling of a value gives the same text; refused when the value lies beyond what a
     * {@link BigDecimal} holds, whatever its spelling, since no Java reader of the body could keep it.
     */
    static String number(String literal) {
        int e = Math.max(literal.indexOf('e'), literal.indexOf('E'));
        String mantissa = e < 0 ? literal : literal.substring(0, e);
        boolean negative = mantissa.startsWith("-");
        int point = mantissa.indexOf('.');
        String digits = (point < 0 ? mantissa : mantissa.substring(0, point) + mantissa.substring(point + 1))
                .substring(negative ? 1 : 0);
        int first = 0;
        while (first < digits.length() && digits.charAt(first) == '0') {
            first++;
        }
        int end = digits.length();
        while (end > first && digits.charAt(end - 1) == '0') {
            end--;
        }
        if (first == end) {
            return "0";
        }
        BigInteger exponent = e < 0 ? BigInteger.ZERO : new BigInteger(literal.substring(e + 1));
        exponent = exponent.add(BigInteger.valueOf((long) (digits.length() - end)
                - (point < 0 ? 0 : mantissa.length() - point - 1)));
        if (exponent.compareTo(BigInteger.valueOf(MAX_EXPONENT)) > 0
                || exponent.compareTo(BigInteger.valueOf(MIN_EXPONENT)) < 0) {
            throw new RequestBodyException(Problem.NUMBER_OUT_OF_RANGE, "The JSON body has a number whose exponent is "
                    + "out of range: " + abbreviated(literal) + " (a BigDecimal holds exponents from " + MIN_EXPONENT
                    + " to " + MAX_EXPONENT + ")");
        }
        return (negative ? "-" : "") + digits.substring(first, end) + "e" + exponent;
    }

    private static String abbreviated(String literal) {
        return literal.length() <= 40 ? literal : literal.substring(0, 20) + "…" + literal.substring(literal.length() - 12);
    }

    /** An object's member: its name quoted, and its value. */
    private record Member(String name, Object value) {
    }

    /** {@code value} quoted with minimal escapes; refuses U+0000 and unpaired surrogates. */
    private static String string(String value) {
        StringBuilder out = new StringBuilder(value.length() + 2);
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
                case '\u0000' -> throw new RequestBodyException(Problem.UNSTORABLE_CHARACTER,
                        "The JSON body has a string with U+0000, which cannot be stored");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else if (Character.isHighSurrogate(c) && i + 1 < value.length()
                            && Character.isLowSurrogate(value.charAt(i + 1))) {
                        out.append(c).append(value.charAt(++i));
                    } else if (Character.isSurrogate(c)) {
                        throw new RequestBodyException(Problem.INVALID_UNICODE, String.format(
                                "The JSON body has a string with an unpaired surrogate \\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
        return out.toString();
    }
}
