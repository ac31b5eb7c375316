package dev.once.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.example.Downstream;
import org.junit.jupiter.api.Test;

/** What is kept of a handler's failure: a bounded message and a fingerprint that groups failures by cause. */
class HandlerFailureTest {

    @Test
    void a_long_message_is_kept_to_its_first_500_characters_and_never_half_a_character() {
        HandlerFailure failure = HandlerFailure.of(new HandlerFailedException("mailer",
                new IllegalStateException("x".repeat(2_000))));
        assertThat(failure.message()).isEqualTo("x".repeat(HandlerFailure.MESSAGE_LIMIT));

        String emoji = "\uD83D\uDCE7"; // one character, two chars: a surrogate pair across the limit
        HandlerFailure cut = HandlerFailure.of(new HandlerFailedException("mailer",
                new IllegalStateException("y".repeat(HandlerFailure.MESSAGE_LIMIT - 1) + emoji + "z")));
        assertThat(cut.message()).isEqualTo("y".repeat(HandlerFailure.MESSAGE_LIMIT - 1));
    }

    @Test
    void failures_of_one_exception_class_thrown_at_one_place_share_a_fingerprint_whatever_their_messages() {
        HandlerFailure first = failed(Downstream.sendMail("503 for order 1"));
        HandlerFailure second = failed(Downstream.sendMail("503 for order 2"));
        HandlerFailure elsewhere = failed(Downstream.chargeCard("503"));
        HandlerFailure otherClass = failed(Downstream.timeOut("503"));

        assertThat(first.fingerprint()).isEqualTo(second.fingerprint()).hasSize(16);
        assertThat(elsewhere.fingerprint()).as("the same class thrown by another method of the handler's code")
                .isNotEqualTo(first.fingerprint());
        assertThat(otherClass.fingerprint()).isNotEqualTo(first.fingerprint());
        assertThat(first.exceptionClass()).isEqualTo(IllegalStateException.class.getName());
        assertThat(first.handlerKeys()).containsExactly("mailer");
    }

    @Test
    void a_failure_without_a_message_is_kept_with_its_class() {
        HandlerFailure failure = failed(new NullPointerException());
        assertThat(failure.exceptionClass()).isEqualTo(NullPointerException.class.getName());
        assertThat(failure.message()).isEqualTo("null");
    }

    private static HandlerFailure failed(Exception cause) {
        return HandlerFailure.of(new HandlerFailedException("mailer", cause));
    }
}
