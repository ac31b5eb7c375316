package dev.once.idempotency;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.once.test.JsonDocuments;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * The canonical form against an independent oracle: documents are generated as text with every spelling JSON allows
 * (member order, whitespace, escapes, number notation) and decoded by {@link Oracle}, a small reader written for this
 * test. Two accepted documents have one canonical form if and only if the oracle finds them equal as JSON values, and
 * a document is refused if and only if the oracle finds it outside I-JSON.
 */
class CanonicalFormPropertiesTest {

    private static final Route ROUTE = Route.http("POST", "/documents");

    @Property(tries = 1500)
    void two_spellings_share_a_canonical_form_exactly_when_they_are_the_same_json_value(@ForAll long seed) {
        Random random = new Random(seed);
        Object value = JsonDocuments.value(random, 3);
        Object other = random.nextInt(3) == 0 ? value : random.nextBoolean() ? JsonDocuments.mutate(value, random)
                : JsonDocuments.value(random, 3);
        String a = JsonDocuments.render(value, random, true);
        String b = JsonDocuments.render(other, random, true);

        Oracle.Result left = Oracle.decode(a);
        Oracle.Result right = Oracle.decode(b);
        assertAgreesWithOracle(a, left);
        assertAgreesWithOracle(b, right);
        net.jqwik.api.statistics.Statistics.collect(left.accepted() ? "accepted" : left.refusal(),
                left.accepted() && right.accepted() ? Oracle.same(left.value(), right.value()) ? "equal" : "different" : "-");
        if (left.accepted() && right.accepted()) {
            assertThat(hash(a).equals(hash(b))).as("%s vs %s", a, b).isEqualTo(Oracle.same(left.value(), right.value()));
        }
    }

    @Property(tries = 500)
    void the_same_value_respelt_always_has_the_same_canonical_form(@ForAll long seed) {
        Random random = new Random(seed);
        Object value = JsonDocuments.value(random, 4);
        String a = JsonDocuments.render(value, random, false);
        String b = JsonDocuments.render(value, random, false);
        if (Oracle.decode(a).accepted()) { // then every spelling is: acceptance depends on the value alone
            assertThat(JsonCanonicalizer.canonicalize(b.getBytes(UTF_8))).as("%s vs %s", a, b)
                    .isEqualTo(JsonCanonicalizer.canonicalize(a.getBytes(UTF_8)));
        } else {
            assertThat(Oracle.decode(b).accepted()).as(b).isFalse();
        }
    }

    private static void assertAgreesWithOracle(String json, Oracle.Result oracle) {
        Throwable refusal = catchThrowable(() -> hash(json));
        if (oracle.accepted()) {
            assertThat(refusal).as(json).isNull();
        } else {
            assertThat(refusal).as(json).isInstanceOfSatisfying(RequestBodyException.class,
                    e -> assertThat(e.problem()).as(json).isEqualTo(oracle.refusal()));
        }
    }

    private static String hash(String json) {
        return RequestFingerprint.of("POST", ROUTE, "application/json", json.getBytes(UTF_8));
    }

    /** An independent JSON reader: RFC 8259's grammar, then I-JSON's rules, into plain Java values. */
    static final class Oracle {

        record Result(Object value, RequestBodyException.Problem refusal) {
            boolean accepted() {
                return refusal == null;
            }
        }

        private static final class Refused extends RuntimeException {
            final RequestBodyException.Problem problem;

            Refused(RequestBodyException.Problem problem) {
                super(problem.name(), null, false, false);
                this.problem = problem;
            }
        }

        private final String text;
        private int at;

        private Oracle(String text) {
            this.text = text;
        }

        /** Decodes the bytes a body would carry: {@code json} in UTF-8. */
        static Result decode(String json) {
            String text;
            try {
                text = java.nio.charset.StandardCharsets.UTF_8.newDecoder()
                        .decode(java.nio.ByteBuffer.wrap(json.getBytes(UTF_8))).toString();
            } catch (java.nio.charset.CharacterCodingException e) {
                return new Result(null, RequestBodyException.Problem.INVALID_UNICODE);
            }
            Oracle reader = new Oracle(text);
            try {
                reader.skipSpace();
                Object value = reader.value(0);
                reader.skipSpace();
                if (reader.at != text.length()) {
                    throw new Refused(RequestBodyException.Problem.MALFORMED);
                }
                return new Result(value, null);
            } catch (Refused e) {
                return new Result(null, e.problem);
            }
        }

        /** Equal as JSON values: numbers by value, objects whatever their member order. */
        static boolean same(Object a, Object b) {
            if (a instanceof Map<?, ?> x && b instanceof Map<?, ?> y) {
                return x.keySet().equals(y.keySet()) && x.keySet().stream().allMatch(k -> same(x.get(k), y.get(k)));
            }
            if (a instanceof List<?> x && b instanceof List<?> y) {
                if (x.size() != y.size()) {
                    return false;
                }
                for (int i = 0; i < x.size(); i++) {
                    if (!same(x.get(i), y.get(i))) {
                        return false;
                    }
                }
                return true;
            }
            return Objects.equals(a, b);
        }

        private Object value(int depth) {
            if (depth > 100) {
                throw new IllegalStateException("the generator nests at most 5 deep");
            }
            char c = peek();
            if (c == '{') {
                at++;
                Map<String, Object> members = new LinkedHashMap<>();
                skipSpace();
                if (peek() == '}') {
                    at++;
                    return members;
                }
                while (true) {
                    skipSpace();
                    String name = string();
                    skipSpace();
                    expect(':');
                    skipSpace();
                    Object member = value(depth + 1);
                    if (members.containsKey(name)) {
                        throw new Refused(RequestBodyException.Problem.DUPLICATE_MEMBER);
                    }
                    members.put(name, member);
                    skipSpace();
                    if (peek() == ',') {
                        at++;
                        continue;
                    }
                    expect('}');
                    return members;
                }
            }
            if (c == '[') {
                at++;
                List<Object> elements = new ArrayList<>();
                skipSpace();
                if (peek() == ']') {
                    at++;
                    return elements;
                }
                while (true) {
                    skipSpace();
                    elements.add(value(depth + 1));
                    skipSpace();
                    if (peek() == ',') {
                        at++;
                        continue;
                    }
                    expect(']');
                    return elements;
                }
            }
            if (c == '"') {
                return string();
            }
            for (String literal : new String[] {"true", "false", "null"}) {
                if (text.startsWith(literal, at)) {
                    at += literal.length();
                    return literal.equals("null") ? JsonDocuments.NULL : Boolean.valueOf(literal);
                }
            }
            return number();
        }

        /** A number as its digits without trailing zeros and a power of ten: one form per value. */
        record Num(BigInteger digits, BigInteger exponent) {
        }

        private Num number() {
            java.util.regex.Matcher m = java.util.regex.Pattern
                    .compile("(-?)(0|[1-9][0-9]*)(?:\\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?").matcher(text).region(at, text.length());
            if (!m.lookingAt()) {
                throw new Refused(RequestBodyException.Problem.MALFORMED);
            }
            at = m.end();
            String fraction = m.group(3) == null ? "" : m.group(3);
            BigInteger digits = new BigInteger(m.group(2) + fraction);
            BigInteger exponent = (m.group(4) == null ? BigInteger.ZERO : new BigInteger(m.group(4)))
                    .subtract(BigInteger.valueOf(fraction.length()));
            if (digits.signum() == 0) {
                return new Num(BigInteger.ZERO, BigInteger.ZERO);
            }
            while (digits.mod(BigInteger.TEN).signum() == 0) {
                digits = digits.divide(BigInteger.TEN);
                exponent = exponent.add(BigInteger.ONE);
            }
            // what a BigDecimal holds: unscaled digits with an int scale, the scale being minus the exponent
            BigInteger scale = exponent.negate();
            if (scale.compareTo(BigInteger.valueOf(Integer.MIN_VALUE)) < 0
                    || scale.compareTo(BigInteger.valueOf(Integer.MAX_VALUE)) > 0) {
                throw new Refused(RequestBodyException.Problem.NUMBER_OUT_OF_RANGE);
            }
            return new Num(m.group(1).isEmpty() ? digits : digits.negate(), exponent);
        }

        private String string() {
            expect('"');
            StringBuilder s = new StringBuilder();
            while (true) {
                char c = text.charAt(at++);
                if (c == '"') {
                    break;
                }
                if (c < 0x20) {
                    throw new Refused(RequestBodyException.Problem.MALFORMED);
                }
                if (c != '\\') {
                    s.append(c);
                    continue;
                }
                char e = text.charAt(at++);
                switch (e) {
                    case '"', '\\', '/' -> s.append(e);
                    case 'b' -> s.append('\b');
                    case 'f' -> s.append('\f');
                    case 'n' -> s.append('\n');
                    case 'r' -> s.append('\r');
                    case 't' -> s.append('\t');
                    case 'u' -> {
                        s.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        at += 4;
                    }
                    default -> throw new Refused(RequestBodyException.Problem.MALFORMED);
                }
            }
            String value = s.toString();
            // I-JSON: strings are Unicode (surrogates in pairs); and PostgreSQL stores no U+0000. The first wins.
            for (int i = 0; i < value.length(); i++) {
                char c = value.charAt(i);
                if (c == 0) {
                    throw new Refused(RequestBodyException.Problem.UNSTORABLE_CHARACTER);
                }
                if (Character.isHighSurrogate(c) && i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
                    i++;
                } else if (Character.isSurrogate(c)) {
                    throw new Refused(RequestBodyException.Problem.INVALID_UNICODE);
                }
            }
            return value;
        }

        private char peek() {
            if (at >= text.length()) {
                throw new Refused(RequestBodyException.Problem.MALFORMED);
            }
            return text.charAt(at);
        }

        private void expect(char c) {
            if (peek() != c) {
                throw new Refused(RequestBodyException.Problem.MALFORMED);
            }
            at++;
        }

        private void skipSpace() {
            while (at < text.length() && " \t\n\r".indexOf(text.charAt(at)) >= 0) {
                at++;
            }
        }
    }
}
