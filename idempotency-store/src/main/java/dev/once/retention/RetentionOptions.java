package dev.once.retention;

import java.time.Duration;

/**
 * How the retention sweep runs. Immutable; start from {@link #ofDefaults()}.
 *
 * @param interval how often a round starts
 * @param batchSize rows deleted per statement, each statement its own short transaction
 * @param pause between two batches of a round, so that a backlog never takes the database from the request path
 * @param maxOverdue the sweep is unhealthy while the oldest row due has waited longer than this past its due time
 */
public record RetentionOptions(Duration interval, int batchSize, Duration pause, Duration maxOverdue) {

    public static final Duration INTERVAL = Duration.ofMinutes(1);
    public static final int BATCH_SIZE = 1_000;
    public static final Duration PAUSE = Duration.ofMillis(20);
    public static final Duration MAX_OVERDUE = Duration.ofHours(1);

    public RetentionOptions {
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be at least 1, was " + batchSize);
        }
        if (interval == null || interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("interval must be positive, was " + interval);
        }
        if (pause == null || pause.isNegative() || maxOverdue == null || maxOverdue.isNegative()) {
            throw new IllegalArgumentException("pause and maxOverdue must not be negative, were " + pause + ", " + maxOverdue);
        }
    }

    public static RetentionOptions ofDefaults() {
        return new RetentionOptions(INTERVAL, BATCH_SIZE, PAUSE, MAX_OVERDUE);
    }

    public RetentionOptions withInterval(Duration every) {
        return new RetentionOptions(every, batchSize, pause, maxOverdue);
    }

    public RetentionOptions withBatch(int size, Duration between) {
        return new RetentionOptions(interval, size, between, maxOverdue);
    }

    public RetentionOptions withMaxOverdue(Duration limit) {
        return new RetentionOptions(interval, batchSize, pause, limit);
    }
}
