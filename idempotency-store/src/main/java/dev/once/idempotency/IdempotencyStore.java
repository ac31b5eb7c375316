package dev.once.idempotency;

import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The PostgreSQL-backed idempotency store on the request path: atomic claims, the
 * {@code processing → succeeded | failed | expired} state machine with leases and a TTL, and replay. What operators do
 * (diagnose, expire, purge, find stuck, force-release) is {@link IdempotencyOperations}.
 *
 * <h2>Transactions</h2>
 * {@link #claim} and the transitions join the caller's Spring-managed transaction (JPA or JDBC) when one is active,
 * and run as their own single-statement transaction otherwise. So {@code bindOutboxEvent} commits or rolls back with
 * the outbox row written in the same transaction.
 * READ COMMITTED (PostgreSQL's default) is assumed.
 *
 * <h2>Several instances</h2>
 * Every decision is made by PostgreSQL, against a unique constraint and the database clock ({@code statement_timestamp()}), never by
 * in-memory state or an application clock: any number of instances may share one database.
 *
 * <p>Implementations are thread-safe.
 */
public interface IdempotencyStore {

    /** A store over {@code dataSource}, whose schema {@link OnceMigrations#migrate} has created. */
    static IdempotencyStore create(DataSource dataSource) {
        return create(dataSource, IdempotencyStoreOptions.ofDefaults());
    }

    static IdempotencyStore create(DataSource dataSource, IdempotencyStoreOptions options) {
        return new JdbcIdempotencyStore(dataSource, options);
    }

    /**
     * Claims {@code scope} for a request with fingerprint {@code requestHash}, atomically, in one SQL statement:
     * insert-first on the scope's unique constraint, never check-then-insert. A record is reclaimable when it is past
     * its TTL (or released), when it is processing under a lapsed lease <em>with the same request hash</em>, or when
     * it failed and {@code policy} allows retrying failures with the same request hash.
     * A replay is a pure read: no write, no row lock.
     *
     * <p>Made outside a transaction, a fresh claim commits with {@code synchronous_commit=off} for that statement
     * only: visible to all sessions at once, durable with the next synchronous commit, at the latest that of the work
     * built on it. A database crash can thus forget only a claim that nothing durable was built on, and the retry
     * claims afresh, as after a lapsed lease.
     */
    ClaimResult claim(IdempotencyScope scope, String requestHash, ClaimPolicy policy);

    /**
     * Claims every scope whose key does not exist yet, in one statement, in the current transaction; returns the
     * tokens index by index, {@code null} where the key existed (claim those with {@link #claim}, which decides replay,
     * conflict or reclaim). Duplicate scopes in one call are claimed once.
     */
    List<ClaimToken> claimFresh(List<IdempotencyScope> scopes, List<String> requestHashes, ClaimPolicy policy);

    /**
     * Claims every scope whose key does not exist yet as already completed with {@code response}, in one statement, in
     * the current transaction: one write per claim, for work that commits in this same transaction (a rollback leaves
     * nothing; a concurrent duplicate waits on the unique key, then finds the claim completed). Returns, index by
     * index, whether the key was fresh; claim the others with {@link #claim}. Duplicate scopes are claimed once.
     */
    boolean[] claimCompleted(List<IdempotencyScope> scopes, List<String> requestHashes, ClaimPolicy policy,
                             StoredResponse response);

    /** Completes every claim with {@code response} in one statement; returns how many tokens still owned their record. */
    int markAllSucceeded(List<ClaimToken> tokens, StoredResponse response);

    /** Stores the response and moves the claimed record to {@code succeeded}; joins the current transaction. */
    TransitionResult markSucceeded(ClaimToken token, StoredResponse response);

    /**
     * Like {@link #markSucceeded}, and binds the task and outbox event ids in the same statement
     * ({@code null} leaves a binding unchanged).
     */
    TransitionResult markSucceeded(ClaimToken token, StoredResponse response, String taskId, UUID outboxEventId);

    /**
     * Like {@link #markSucceeded(ClaimToken, StoredResponse, String, UUID)}, and also appends {@code events} to the
     * outbox, in the same statement and the current transaction, binding the first event's id to the record. Every
     * event must carry its id (see {@link dev.once.outbox.UuidV7}).
     */
    TransitionResult markSucceededWithEvents(ClaimToken token, StoredResponse response, String taskId,
                                             List<dev.once.outbox.OutboxEvent> events);

    /**
     * {@link #markSucceededWithEvents}, written with the commit of the current transaction. On an
     * {@link dev.once.OnceDataSource} the completion and its events are deferred to the {@code COMMIT} and sent with
     * it in one round trip; if the claim turns out stale there, the commit fails (see
     * {@link StaleClaimException#isCause}) and nothing of the transaction takes effect. Otherwise, or outside a
     * transaction, it is written at once, and a stale claim throws {@link StaleClaimException}.
     */
    default void markSucceededAtCommit(ClaimToken token, StoredResponse response, String taskId,
                                       List<dev.once.outbox.OutboxEvent> events) {
        markSucceededWithEvents(token, response, taskId, events).orThrow(token);
    }

    /** Stores the error response and moves the claimed record to {@code failed}; joins the current transaction. */
    TransitionResult markFailed(ClaimToken token, StoredResponse response);

    /** Binds the id of a submitted task to the claimed record; joins the current transaction. */
    TransitionResult bindTask(ClaimToken token, String taskId);

    /** Binds the id of an outbox event to the claimed record; joins the transaction that writes the outbox row. */
    TransitionResult bindOutboxEvent(ClaimToken token, UUID eventId);

    /**
     * Gives the claim up without storing a result (for example after a transient 429/503): the record becomes
     * {@code expired} at once and the key may be claimed again by any request.
     */
    TransitionResult release(ClaimToken token);
}
