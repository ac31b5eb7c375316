package dev.once.relay;

import java.time.Duration;

/**
 * How a relay runs. Immutable; start from {@link #ofDefaults()} and change with the {@code with*} methods.
 *
 * @param batchSize rows read and published per batch
 * @param idlePause how long the polling relay waits when it found nothing to publish
 * @param backoffMin first pause after Kafka was unavailable
 * @param backoffMax longest pause between attempts while Kafka stays unavailable
 * @param retention how long published rows are kept; {@link Duration#ZERO} deletes them as soon as they are published.
 *        The relay only marks rows it keeps: {@code dev.once.retention.RetentionSweeper} deletes them once the
 *        retention has passed ({@code RetentionRule.publishedOutboxEvents})
 * @param workers batches the polling relay works on at once, each on aggregates of its own
 */
public record RelayOptions(int batchSize, Duration idlePause, Duration backoffMin, Duration backoffMax, Duration retention,
                           int workers) {

    public static final int BATCH_SIZE = 500;
    public static final Duration IDLE_PAUSE = Duration.ofMillis(50);
    public static final Duration BACKOFF_MIN = Duration.ofMillis(200);
    public static final Duration BACKOFF_MAX = Duration.ofSeconds(10);
    public static final Duration RETENTION = dev.once.retention.RetentionRule.OUTBOX_RETENTION;
    public static final int WORKERS = 2;
    /** A relay whose oldest pending event is older than this is not publishing: its health is DOWN. */
    public static final Duration MAX_PENDING_AGE = Duration.ofMinutes(1);

    public RelayOptions {
        if (batchSize < 1 || workers < 1) {
            throw new IllegalArgumentException("batchSize and workers must be at least 1");
        }
        if (retention.isNegative() || backoffMin.isNegative() || backoffMax.compareTo(backoffMin) < 0) {
            throw new IllegalArgumentException("retention must not be negative and backoffMax >= backoffMin");
        }
    }

    public static RelayOptions ofDefaults() {
        return new RelayOptions(BATCH_SIZE, IDLE_PAUSE, BACKOFF_MIN, BACKOFF_MAX, RETENTION, WORKERS);
    }

    public RelayOptions withBatchSize(int size) {
        return new RelayOptions(size, idlePause, backoffMin, backoffMax, retention, workers);
    }

    public RelayOptions withRetention(Duration keep) {
        return new RelayOptions(batchSize, idlePause, backoffMin, backoffMax, keep, workers);
    }

    public RelayOptions withWorkers(int count) {
        return new RelayOptions(batchSize, idlePause, backoffMin, backoffMax, retention, count);
    }

    public RelayOptions withBackoff(Duration min, Duration max) {
        return new RelayOptions(batchSize, idlePause, min, max, retention, workers);
    }
}
