package dev.once.example;

import java.util.Base64;
import java.util.regex.Pattern;

/** Request checks that answer 400 problem+json {@code VALIDATION_FAILED} naming the field. */
public final class Validation {

    private static final Pattern EMAIL = Pattern.compile("^[^@\\s]{1,64}@[^@\\s]{1,255}$");

    private Validation() {
    }

    public static String text(String field, String value, int maxLength) {
        if (value == null || value.isBlank()) {
            throw ApiProblem.invalid("'" + field + "' is required.");
        }
        if (value.length() > maxLength) {
            throw ApiProblem.invalid("'" + field + "' is longer than " + maxLength + " characters.");
        }
        if (value.chars().anyMatch(Character::isISOControl)) {
            throw ApiProblem.invalid("'" + field + "' contains control characters.");
        }
        return value.strip();
    }

    public static String email(String value) {
        String email = text("email", value, 320);
        if (!EMAIL.matcher(email).matches()) {
            throw ApiProblem.invalid("'email' is not an email address.");
        }
        return email;
    }

    public static byte[] base64(String field, String value, int maxBytes) {
        if (value == null) {
            throw ApiProblem.invalid("'" + field + "' is required.");
        }
        byte[] bytes;
        try {
            bytes = Base64.getDecoder().decode(value);
        } catch (IllegalArgumentException e) {
            throw ApiProblem.invalid("'" + field + "' is not valid base64.");
        }
        if (bytes.length > maxBytes) {
            throw ApiProblem.invalid("'" + field + "' decodes to more than " + maxBytes + " bytes.");
        }
        return bytes;
    }
}
