package dev.once.idempotency;

import static dev.once.idempotency.IdempotencyDefaults.MAX_KEY_LENGTH;

import dev.once.idempotency.IdempotencyKeyException.Problem;

/**
 * A client-chosen idempotency key: 1–255 visible ASCII characters ({@code %x21-7E}), as the IETF
 * Idempotency-Key draft and Stripe accept. Anything else is refused with an {@link IdempotencyKeyException} whose
 * message names the problem and its position. Immutable.
 */
public record IdempotencyKey(String value) {

    public IdempotencyKey {
        validate(value);
    }

    public static IdempotencyKey of(String value) {
        return new IdempotencyKey(value);
    }

    private static void validate(String value) {
        if (value == null) {
            throw new IdempotencyKeyException(Problem.MISSING, "Idempotency key is missing");
        }
        if (value.isEmpty()) {
            throw new IdempotencyKeyException(Problem.EMPTY, "Idempotency key is empty; it must be 1-" + MAX_KEY_LENGTH
                    + " visible ASCII characters");
        }
        if (value.length() > MAX_KEY_LENGTH) {
            throw new IdempotencyKeyException(Problem.TOO_LONG, "Idempotency key is " + value.length()
                    + " characters long; at most " + MAX_KEY_LENGTH + " are allowed");
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c >= 0x21 && c <= 0x7E) {
                continue;
            }
            String where = " at index " + i + String.format(" (U+%04X)", (int) c);
            if (c < 0x20 || c == 0x7F) {
                throw new IdempotencyKeyException(Problem.CONTROL_CHARACTER,
                        "Idempotency key contains a control character" + where + "; only visible ASCII is allowed");
            }
            if (c == 0x20) {
                throw new IdempotencyKeyException(Problem.WHITESPACE,
                        "Idempotency key contains a space" + where + "; only visible ASCII is allowed");
            }
            throw new IdempotencyKeyException(Problem.NON_ASCII,
                    "Idempotency key contains a non-ASCII character" + where + "; only visible ASCII is allowed");
        }
    }

    @Override
    public String toString() {
        return value;
    }
}
