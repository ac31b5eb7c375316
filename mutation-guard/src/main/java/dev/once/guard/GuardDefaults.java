package dev.once.guard;

import java.time.Duration;
import java.util.Set;

/**
 * Defaults of the mutation guard, beside the store's own in {@link dev.once.idempotency.IdempotencyDefaults}. The
 * Spring Boot properties ({@code once.idempotency.*}) reuse these constants.
 */
public final class GuardDefaults {

    /** Responses with these statuses are not stored; the claim is released so a retry runs again. */
    public static final Set<Integer> TRANSIENT_STATUSES = Set.of(429, 503);

    /** What a request finds while the same key is being processed. */
    public static final InProgressBehaviour IN_PROGRESS = InProgressBehaviour.REJECT;

    /** How long {@link InProgressBehaviour#WAIT} waits for the first request before answering 409. */
    public static final Duration WAIT_MAX = Duration.ofSeconds(5);

    /** The first and the longest pause between two looks while waiting. */
    public static final Duration WAIT_POLL_MIN = Duration.ofMillis(20);
    public static final Duration WAIT_POLL_MAX = Duration.ofMillis(250);

    /** Largest request body the HTTP layer reads to fingerprint a guarded request. */
    public static final int MAX_REQUEST_BODY_BYTES = 1024 * 1024;

    /** Response headers stored and replayed besides Content-Type. */
    public static final Set<String> REPLAYED_HEADERS = Set.of("Location");

    /** With Spring Security, an authority with this prefix names the user's tenant: {@code TENANT_acme} is acme. */
    public static final String TENANT_AUTHORITY_PREFIX = "TENANT_";

    /** The tenant of users without a tenant authority; empty refuses such users (403) instead. */
    public static final String DEFAULT_TENANT = "default";

    /** Where the work of a WebFlux route runs: the guard's JDBC transaction, on a bounded scheduler. */
    public static final ReactiveMutationGuard.Transactions REACTIVE_TRANSACTIONS = ReactiveMutationGuard.Transactions.JDBC;

    /**
     * Threads that run WebFlux routes' JDBC work (claims, the work's transaction, completions), from one shared queue:
     * a blocked run holds its thread, never the runs queued after it. Match it to the connection pool.
     */
    public static final int REACTIVE_JDBC_THREADS = 32;

    private GuardDefaults() {
    }
}
