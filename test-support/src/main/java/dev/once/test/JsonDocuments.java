package dev.once.test;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * JSON documents for grammar-based tests, from a seed: values (maps, lists, {@link BigDecimal}, String, Boolean and
 * {@link #NULL}) with the edges JSON and I-JSON have (exponents at the end of a {@link BigDecimal}'s range, every class
 * of character and escape, unpaired surrogates, U+0000), and their JSON texts in any of the spellings JSON allows
 * (member order, whitespace, escapes, number notation), with duplicate member names on request.
 */
public final class JsonDocuments {

    /** JSON's null among generated values. */
    public static final Object NULL = new Object() {
        @Override
        public String toString() {
            return "null";
        }
    };

    /** Characters by class: each class is spelt in its own ways, and two classes are refused. */
    private static final int[] SPECIAL = {'"', '\\', '/', '\b', '\f', '\n', '\r', '\t', 0x01, 0x1F, 0x7F, 0xE9,
            0x2028, 0xFEFF, 0xFFFF, 0x1F600, 0x10FFFF};

    private JsonDocuments() {
    }

    /** A value nested at most {@code depth} deep. */
    public static Object value(Random random, int depth) {
        int kind = random.nextInt(depth <= 0 ? 4 : 6);
        return switch (kind) {
            case 0 -> number(random);
            case 1 -> string(random);
            case 2 -> random.nextBoolean();
            case 3 -> random.nextInt(4) == 0 ? NULL : number(random);
            case 4 -> {
                Map<String, Object> members = new LinkedHashMap<>();
                int n = random.nextInt(5);
                for (int i = 0; i < n; i++) {
                    members.put(random.nextInt(8) == 0 ? string(random) : "k" + random.nextInt(6), value(random, depth - 1));
                }
                yield members;
            }
            default -> {
                List<Object> elements = new ArrayList<>();
                int n = random.nextInt(5);
                for (int i = 0; i < n; i++) {
                    elements.add(value(random, depth - 1));
                }
                yield elements;
            }
        };
    }

    /** A number: small, 64-bit, up to 60 digits, or ids past 2^53; scales small, large, or at an int's edge. */
    public static BigDecimal number(Random random) {
        BigInteger unscaled = switch (random.nextInt(4)) {
            case 0 -> BigInteger.valueOf(random.nextInt(21) - 10);
            case 1 -> BigInteger.valueOf(random.nextLong());
            case 2 -> new BigInteger(random.nextInt(200) + 1, random).multiply(BigInteger.TEN.pow(random.nextInt(4)));
            default -> BigInteger.valueOf(9007199254740993L + random.nextInt(3));
        };
        int scale = switch (random.nextInt(5)) {
            case 0 -> 0;
            case 1 -> random.nextInt(12) - 6;
            case 2 -> random.nextInt(2_000) - 1_000;
            case 3 -> Integer.MAX_VALUE - random.nextInt(3); // at the edge of what a BigDecimal holds
            default -> Integer.MIN_VALUE + random.nextInt(3);
        };
        return new BigDecimal(random.nextBoolean() ? unscaled : unscaled.negate(), scale);
    }

    /** Up to five characters of every class: ASCII, escapes, controls, BMP, supplementary, lone surrogates, NUL. */
    public static String string(Random random) {
        StringBuilder s = new StringBuilder();
        int n = random.nextInt(6);
        for (int i = 0; i < n; i++) {
            int which = random.nextInt(20);
            if (which < 8) {
                s.append((char) ('a' + random.nextInt(26)));
            } else if (which < 16) {
                s.appendCodePoint(SPECIAL[random.nextInt(SPECIAL.length)]);
            } else if (which < 18) {
                s.append((char) (0xD800 + random.nextInt(0x800))); // an unpaired surrogate
            } else if (which < 19) {
                s.append('\u0000');
            } else {
                s.appendCodePoint(0x80 + random.nextInt(0x10FFFF - 0x80));
            }
        }
        return s.toString();
    }

    /** {@code value} with one scalar somewhere replaced, or a member or element added or removed. */
    @SuppressWarnings("unchecked")
    public static Object mutate(Object value, Random random) {
        if (value instanceof Map<?, ?> map && !map.isEmpty() && random.nextInt(3) > 0) {
            Map<String, Object> copy = new LinkedHashMap<>((Map<String, Object>) map);
            String key = new ArrayList<>(copy.keySet()).get(random.nextInt(copy.size()));
            copy.put(key, mutate(copy.get(key), random));
            return copy;
        }
        if (value instanceof List<?> list && !list.isEmpty() && random.nextInt(3) > 0) {
            List<Object> copy = new ArrayList<>(list);
            int i = random.nextInt(copy.size());
            copy.set(i, mutate(copy.get(i), random));
            return copy;
        }
        if (value instanceof BigDecimal d && random.nextBoolean()) {
            return new BigDecimal(d.unscaledValue().add(BigInteger.ONE), d.scale()); // a close neighbour
        }
        if (value instanceof String s && !s.isEmpty() && random.nextBoolean()) {
            return s.substring(0, s.length() - 1) + (char) (s.charAt(s.length() - 1) ^ 1);
        }
        return value(random, 1);
    }

    /** {@code value} spelt at random; with {@code duplicates}, now and then an object repeats a member name. */
    public static String render(Object value, Random random, boolean duplicates) {
        StringBuilder out = new StringBuilder();
        render(value, random, duplicates, out);
        return out.toString();
    }

    @SuppressWarnings("unchecked")
    private static void render(Object value, Random random, boolean duplicates, StringBuilder out) {
        space(random, out);
        if (value instanceof Map<?, ?> map) {
            List<Map.Entry<String, Object>> members = new ArrayList<>(((Map<String, Object>) map).entrySet());
            if (duplicates && !members.isEmpty() && random.nextInt(8) == 0) {
                members.add(Map.entry(members.get(random.nextInt(members.size())).getKey(), value(random, 0)));
            }
            Collections.shuffle(members, random);
            out.append('{');
            for (int i = 0; i < members.size(); i++) {
                out.append(i == 0 ? "" : ",");
                space(random, out);
                quote(members.get(i).getKey(), random, out);
                space(random, out);
                out.append(':');
                render(members.get(i).getValue(), random, duplicates, out);
            }
            space(random, out);
            out.append('}');
        } else if (value instanceof List<?> list) {
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                out.append(i == 0 ? "" : ",");
                render(list.get(i), random, duplicates, out);
            }
            space(random, out);
            out.append(']');
        } else if (value instanceof BigDecimal d) {
            out.append(spell(d, random));
        } else if (value instanceof String s) {
            quote(s, random, out);
        } else {
            out.append(value);
        }
        space(random, out);
    }

    private static void space(Random random, StringBuilder out) {
        if (random.nextInt(4) == 0) {
            out.append(" \t\n\r".charAt(random.nextInt(4)));
        }
    }

    /** One of the spellings of {@code d}: digits with or without a point, trailing zeros, any exponent form. */
    public static String spell(BigDecimal d, Random random) {
        String digits = d.unscaledValue().abs().toString();
        long exponent = -(long) d.scale();
        if (random.nextBoolean()) {
            int zeros = random.nextInt(3);
            digits += "0".repeat(zeros);
            exponent -= zeros;
        }
        int point = random.nextInt(digits.length() + 1); // digits before the point
        long shown = exponent + digits.length() - point;
        if (point == 0) {
            digits = "0" + digits;
            point = 1;
        }
        String mantissa = point == digits.length() ? digits : digits.substring(0, point) + "." + digits.substring(point);
        if (mantissa.length() > 1 && mantissa.startsWith("0") && mantissa.charAt(1) != '.') {
            mantissa = mantissa.replaceFirst("^0+(?=\\d)", ""); // JSON allows no leading zeros
        }
        String sign = d.signum() < 0 || (d.signum() == 0 && random.nextBoolean()) ? "-" : "";
        if (shown == 0 && random.nextBoolean()) {
            return sign + mantissa;
        }
        String e = random.nextBoolean() ? "e" : "E";
        String plus = shown >= 0 && random.nextBoolean() ? "+" : "";
        String pad = random.nextInt(4) == 0 ? "0" : "";
        return sign + mantissa + e + (shown < 0 ? "-" + pad + (-shown) : plus + pad + shown);
    }

    /** Each character raw where JSON allows it, or escaped (a surrogate pair both raw or both escaped). */
    private static void quote(String s, Random random, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean pair = Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
            boolean escape = c < 0x20 || c == '"' || c == '\\' || (Character.isSurrogate(c) && !pair)
                    || random.nextInt(5) == 0;
            if (pair) {
                char low = s.charAt(++i);
                out.append(escape ? String.format("\\u%04x\\u%04X", (int) c, (int) low) : "" + c + low);
            } else if (escape) {
                String shortEscape = switch (c) {
                    case '"' -> "\\\"";
                    case '\\' -> "\\\\";
                    case '/' -> "\\/";
                    case '\b' -> "\\b";
                    case '\f' -> "\\f";
                    case '\n' -> "\\n";
                    case '\r' -> "\\r";
                    case '\t' -> "\\t";
                    default -> null;
                };
                out.append(shortEscape != null && random.nextBoolean() ? shortEscape
                        : String.format(random.nextBoolean() ? "\\u%04x" : "\\u%04X", (int) c));
            } else {
                out.append(c);
            }
        }
        out.append('"');
    }
}
