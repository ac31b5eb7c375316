package dev.once.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The pause after failures, and the wait between rounds that a wake or a stop ends. */
class BackoffAndWaiterTest {

    @Test
    void a_backoff_doubles_from_its_first_pause_to_its_longest_and_starts_over_after_a_success() {
        Backoff backoff = new Backoff(Duration.ofMillis(200), Duration.ofSeconds(1));
        assertThat(List.of(backoff.next(), backoff.next(), backoff.next(), backoff.next())).containsExactly(
                Duration.ofMillis(200), Duration.ofMillis(400), Duration.ofMillis(800), Duration.ofSeconds(1));
        backoff.reset();
        assertThat(backoff.next()).isEqualTo(Duration.ofMillis(200));
    }

    @Test
    void a_waiter_woken_before_its_pause_does_not_wait_and_a_stopped_one_never_waits_again() {
        Waiter waiter = new Waiter();
        waiter.wake();
        long start = System.nanoTime();
        assertThat(waiter.pause(Duration.ofMinutes(1))).isTrue();
        waiter.stop();
        assertThat(waiter.pause(Duration.ofMinutes(1))).isFalse();
        assertThat(waiter.pause(Duration.ofMinutes(1))).isFalse();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(30));
    }
}
