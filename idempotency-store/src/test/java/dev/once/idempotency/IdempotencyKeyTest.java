package dev.once.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.idempotency.IdempotencyKeyException.Problem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IdempotencyKeyTest {

    @ParameterizedTest
    @ValueSource(strings = {"a", "8e03978e-40d5-43e8-bc93-6894a57f9324", "key_with-symbols.!~{}", "\"quoted\""})
    void visible_ascii_keys_are_accepted(String key) {
        assertThat(IdempotencyKey.of(key).value()).isEqualTo(key);
    }

    @Test
    void a_key_of_exactly_255_characters_is_accepted() {
        assertThat(IdempotencyKey.of("k".repeat(255)).value()).hasSize(255);
    }

    @Test
    void an_empty_key_is_rejected() {
        assertRejected("", Problem.EMPTY, "empty");
    }

    @Test
    void a_missing_key_is_rejected() {
        assertRejected(null, Problem.MISSING, "missing");
    }

    @Test
    void a_key_over_255_characters_is_rejected() {
        assertRejected("k".repeat(256), Problem.TOO_LONG, "256 characters long; at most 255");
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc\ndef", "abc\rdef", "tab\there", "nul\u0000", "del\u007f"})
    void control_characters_are_rejected(String key) {
        assertRejected(key, Problem.CONTROL_CHARACTER, "control character at index");
    }

    @Test
    void a_space_is_rejected() {
        assertRejected("two words", Problem.WHITESPACE, "space at index 3 (U+0020)");
    }

    @ParameterizedTest
    @ValueSource(strings = {"clé", "键", "emoji😀"})
    void non_ascii_characters_are_rejected(String key) {
        assertRejected(key, Problem.NON_ASCII, "non-ASCII character");
    }

    private static void assertRejected(String key, Problem problem, String messagePart) {
        assertThatThrownBy(() -> IdempotencyKey.of(key))
                .isInstanceOfSatisfying(IdempotencyKeyException.class, e -> assertThat(e.problem()).isEqualTo(problem))
                .hasMessageContaining(messagePart);
    }
}
