package dev.once.idempotency;

import java.time.Duration;

/**
 * The defaults of the idempotency store, kept in one place. Spring Boot properties and policies reuse these constants,
 * so a default changes here or nowhere.
 */
public final class IdempotencyDefaults {

    /** How long a claim is held before another request with the same fingerprint may reclaim it. */
    public static final Duration LEASE = Duration.ofSeconds(30);

    /** How long a record is kept and replayed (Stripe keeps keys for 24 hours). */
    public static final Duration TTL = Duration.ofHours(24);

    /** Longest accepted Idempotency-Key, in characters (IETF draft and Stripe: 255). */
    public static final int MAX_KEY_LENGTH = 255;

    /** Longest tenant id, user id or route, in characters. */
    public static final int MAX_SCOPE_PART_LENGTH = 255;

    /** Largest response body stored for replay, in bytes. */
    public static final int MAX_RESPONSE_BODY_BYTES = 64 * 1024;

    /** What happens to a response body over {@link #MAX_RESPONSE_BODY_BYTES}. */
    public static final OversizedResponse OVERSIZED_RESPONSE = OversizedResponse.REJECT;

    /** Rows touched per transaction by {@code expire} and {@code purge}. */
    public static final int SWEEP_BATCH_SIZE = 1_000;

    /** A processing record older than this counts as stuck even while its lease is live. */
    public static final Duration STUCK_AFTER = Duration.ofMinutes(5);

    /**
     * Whether Spring Boot applications get their {@code DataSource} wrapped in {@link dev.once.OnceDataSource}, so that
     * outbox rows and the guard's completion travel with the {@code COMMIT} in one round trip.
     */
    public static final boolean PIPELINED_COMMIT = true;

    /** Whether a Spring Boot application runs Once's Flyway migrations at startup. */
    public static final boolean MIGRATE = true;

    private IdempotencyDefaults() {
    }
}
