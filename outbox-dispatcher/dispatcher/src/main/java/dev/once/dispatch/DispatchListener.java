package dev.once.dispatch;

import java.time.Duration;

/** Observes the dispatcher; the default does nothing. Micrometer binding lives in the autoconfiguration. Thread-safe. */
public interface DispatchListener {

    DispatchListener NONE = new DispatchListener() { };

    /** A handler ran and its claim completed. */
    default void handled(String handlerKey, Duration elapsed) {
    }

    /** A redelivery found the handler's claim settled and skipped it. */
    default void skippedDuplicate(String handlerKey) {
    }

    /** A handler threw; the record will be parked (and retried), or retried in place and dead-lettered. */
    default void failed(String handlerKey) {
    }

    /** A record went to the dead-letter topic. */
    default void deadLettered(String reason) {
    }

    /**
     * A record was refused for its signature ({@code SIGNATURE_MISSING}, {@code SIGNATURE_UNKNOWN_KEY} or
     * {@code SIGNATURE_INVALID}) and dead-lettered; no claim was taken.
     */
    default void rejected(String code) {
    }

    /**
     * No handler takes an event of {@code eventType}: {@code reason} {@code foreign_type} or {@code unknown_version},
     * {@code action} {@code skipped} or {@code held} ({@link UnhandledPolicy}).
     */
    default void unhandled(String eventType, String reason, String action) {
    }

    /** An event was parked: {@code failing} (its handler failed), {@code held}, or {@code behind} its key's. */
    default void parked(String reason) {
    }

    /**
     * A parked event left its key's head: {@code handled} (it ran), {@code dead_lettered} (poison after all) or
     * {@code failed} (its retry window passed: dead-lettered, and its key stays parked behind it).
     */
    default void unparked(String outcome) {
    }
}
