package dev.once.dispatch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** When a parked key's head is tried again: exponential backoff, capped, for a retry window. */
class ParkingPolicyTest {

    @Test
    void by_default_a_head_is_tried_again_after_1_s_then_twice_as_late_each_time_up_to_10_minutes_for_a_day() {
        ParkingPolicy policy = ParkingPolicy.ofDefaults();

        assertThat(IntStream.rangeClosed(1, 12).mapToObj(policy::delay).map(Duration::toSeconds).toList())
                .containsExactly(1L, 2L, 4L, 8L, 16L, 32L, 64L, 128L, 256L, 512L, 600L, 600L);
        assertThat(policy.delay(10_000)).as("no overflow after many failures").isEqualTo(Duration.ofMinutes(10));
        assertThat(policy.window()).isEqualTo(Duration.ofHours(24));
    }

    @Test
    void a_policy_that_would_retry_at_once_or_sooner_each_time_is_refused() {
        Duration second = Duration.ofSeconds(1);
        Duration hour = Duration.ofHours(1);
        assertThatThrownBy(() -> new ParkingPolicy(Duration.ZERO, 2.0, second, hour))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("initialInterval > 0");
        assertThatThrownBy(() -> new ParkingPolicy(second, 0.5, second, hour))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("multiplier >= 1");
        assertThatThrownBy(() -> new ParkingPolicy(second.multipliedBy(2), 2.0, second, hour))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxInterval >= initialInterval");
    }
}
