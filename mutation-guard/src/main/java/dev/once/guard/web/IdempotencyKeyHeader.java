package dev.once.guard.web;

import dev.once.idempotency.IdempotencyKey;
import dev.once.idempotency.IdempotencyKeyException;
import dev.once.idempotency.IdempotencyKeyException.Problem;
import java.util.List;

/**
 * Parses the {@code Idempotency-Key} request header as the IETF draft defines it, an RFC 8941 sf-string
 * ({@code "abc"}, with {@code \"} and {@code \\} escapes), and also accepts a bare token ({@code abc}) as Stripe does.
 * The key inside must be 1–255 visible ASCII characters. Stateless.
 */
public final class IdempotencyKeyHeader {

    public static final String NAME = "Idempotency-Key";

    private IdempotencyKeyHeader() {
    }

    /**
     * The key carried by {@code values} (every {@code Idempotency-Key} header line of the request).
     *
     * @throws IdempotencyKeyException when there is none ({@link Problem#MISSING}), more than one
     *         ({@link Problem#MALFORMED}), or the key is invalid
     */
    public static IdempotencyKey parse(List<String> values) {
        if (values == null || values.isEmpty()) {
            throw new IdempotencyKeyException(Problem.MISSING, NAME + " header is missing");
        }
        if (values.size() > 1) {
            throw new IdempotencyKeyException(Problem.MALFORMED, NAME + " header appears " + values.size()
                    + " times; send it exactly once");
        }
        String value = values.get(0);
        return IdempotencyKey.of(value.startsWith("\"") ? unquote(value) : value);
    }

    private static String unquote(String value) {
        StringBuilder key = new StringBuilder(value.length());
        for (int i = 1; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"') {
                if (i != value.length() - 1) {
                    throw new IdempotencyKeyException(Problem.MALFORMED, NAME + " has characters after its closing quote");
                }
                return key.toString();
            }
            if (c == '\\') {
                if (i + 1 >= value.length() || (value.charAt(i + 1) != '"' && value.charAt(i + 1) != '\\')) {
                    throw new IdempotencyKeyException(Problem.MALFORMED, NAME + " has an invalid escape at index " + i
                            + "; only \\\" and \\\\ are allowed");
                }
                c = value.charAt(++i);
            }
            key.append(c);
        }
        throw new IdempotencyKeyException(Problem.MALFORMED, NAME + " opens a quoted string but never closes it");
    }
}
