package dev.once.retention;

import java.time.Duration;

/** Observes the retention sweep; the default does nothing. Micrometer binding lives in the autoconfiguration. */
public interface RetentionListener {

    RetentionListener NONE = new RetentionListener() { };

    /** {@code rows} of {@code table} were deleted by one batch. */
    default void swept(String table, int rows) {
    }

    /** After each round: how long the oldest due row of {@code table} has waited past its due time (zero: none due). */
    default void overdue(String table, Duration age) {
    }

    /** A round of {@code table} failed; it is tried again next round. */
    default void failed(String table, Exception failure) {
    }
}
