package dev.once.dispatch;

import java.time.Duration;

/**
 * How a record whose handler fails is retried before it is dead-lettered: up to {@code maxAttempts} deliveries in all,
 * waiting {@code initialInterval}, then {@code multiplier} times longer each time, at most {@code maxInterval}.
 */
public record RetryPolicy(int maxAttempts, Duration initialInterval, double multiplier, Duration maxInterval) {

    public static final int MAX_ATTEMPTS = 3;
    public static final Duration INITIAL_INTERVAL = Duration.ofMillis(100);
    public static final double MULTIPLIER = 2.0;
    public static final Duration MAX_INTERVAL = Duration.ofSeconds(10);

    public RetryPolicy {
        if (maxAttempts < 1 || multiplier < 1.0 || initialInterval.isNegative() || maxInterval.compareTo(initialInterval) < 0) {
            throw new IllegalArgumentException("maxAttempts >= 1, multiplier >= 1 and maxInterval >= initialInterval are required");
        }
    }

    public static RetryPolicy ofDefaults() {
        return new RetryPolicy(MAX_ATTEMPTS, INITIAL_INTERVAL, MULTIPLIER, MAX_INTERVAL);
    }

    public static RetryPolicy attempts(int maxAttempts) {
        return new RetryPolicy(maxAttempts, INITIAL_INTERVAL, MULTIPLIER, MAX_INTERVAL);
    }

    org.springframework.util.backoff.BackOff toBackOff() {
        org.springframework.util.backoff.ExponentialBackOff backOff =
                new org.springframework.util.backoff.ExponentialBackOff(initialInterval.toMillis(), multiplier);
        backOff.setMaxInterval(maxInterval.toMillis());
        backOff.setMaxAttempts(maxAttempts - 1);
        return backOff;
    }
}
