package dev.once.dispatch;

import java.time.Duration;

/**
 * How a parked key's failing event is retried: first after {@code initialInterval}, then {@code multiplier} times
 * later each time, at most {@code maxInterval} apart, for {@code window} from its first failure; after that it is
 * failed and dead-lettered, and its key stays parked behind it until an operator retries or abandons it.
 */
public record ParkingPolicy(Duration initialInterval, double multiplier, Duration maxInterval, Duration window) {

    /** A downstream outage of a second is over before the first retry. */
    public static final Duration INITIAL_INTERVAL = Duration.ofSeconds(1);
    public static final double MULTIPLIER = 2.0;
    /** An outage of hours is retried every 10 minutes. */
    public static final Duration MAX_INTERVAL = Duration.ofMinutes(10);
    /** A day: a night's outage recovers without anyone at the keyboard. */
    public static final Duration WINDOW = Duration.ofHours(24);

    public ParkingPolicy {
        if (initialInterval == null || maxInterval == null || window == null || initialInterval.isNegative()
                || initialInterval.isZero() || multiplier < 1.0 || maxInterval.compareTo(initialInterval) < 0
                || window.isNegative()) {
            throw new IllegalArgumentException("parking needs initialInterval > 0, multiplier >= 1, "
                    + "maxInterval >= initialInterval and window >= 0");
        }
    }

    public static ParkingPolicy ofDefaults() {
        return new ParkingPolicy(INITIAL_INTERVAL, MULTIPLIER, MAX_INTERVAL, WINDOW);
    }

    /** The pause after the {@code failures}-th failure (1 for the first). */
    public Duration delay(int failures) {
        double millis = initialInterval.toMillis() * Math.pow(multiplier, Math.max(0, failures - 1));
        return millis >= maxInterval.toMillis() ? maxInterval : Duration.ofMillis((long) millis);
    }

    /** How often a dispatcher looks for due parked events: as often as the first retry, between 0.1 s and 1 s. */
    Duration lookInterval() {
        long millis = Math.max(100, Math.min(1_000, initialInterval.toMillis()));
        return Duration.ofMillis(millis);
    }
}
