package dev.once.guard.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.idempotency.IdempotencyKeyException;
import dev.once.idempotency.IdempotencyKeyException.Problem;
import java.util.List;
import org.junit.jupiter.api.Test;

class IdempotencyKeyHeaderTest {

    @Test
    void a_bare_token_is_the_key() {
        assertThat(IdempotencyKeyHeader.parse(List.of("8e03978e-40d5-43e8")).value()).isEqualTo("8e03978e-40d5-43e8");
    }

    @Test
    void a_structured_field_string_is_unquoted_and_unescaped() {
        assertThat(IdempotencyKeyHeader.parse(List.of("\"abc\"")).value()).isEqualTo("abc");
        assertThat(IdempotencyKeyHeader.parse(List.of("\"a\\\"b\\\\c\"")).value()).isEqualTo("a\"b\\c");
    }

    @Test
    void missing_duplicated_and_malformed_headers_are_rejected_with_their_problem() {
        assertProblem(List.of(), Problem.MISSING);
        assertProblem(List.of("a", "b"), Problem.MALFORMED);
        assertProblem(List.of("\"open"), Problem.MALFORMED);
        assertProblem(List.of("\"a\"b"), Problem.MALFORMED);
        assertProblem(List.of("\"a\\nb\""), Problem.MALFORMED);
        assertProblem(List.of("\"\""), Problem.EMPTY);
        assertProblem(List.of("\"a b\""), Problem.WHITESPACE);
        assertProblem(List.of("a\r\nX-Injected: 1"), Problem.CONTROL_CHARACTER);
    }

    private static void assertProblem(List<String> values, Problem problem) {
        assertThatThrownBy(() -> IdempotencyKeyHeader.parse(values))
                .isInstanceOfSatisfying(IdempotencyKeyException.class, e -> assertThat(e.problem()).isEqualTo(problem));
    }
}
