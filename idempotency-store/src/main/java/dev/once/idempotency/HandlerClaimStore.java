package dev.once.idempotency;

import java.util.List;
import javax.sql.DataSource;

/**
 * Where event handlers claim the events they run: table {@code once_handler_claim}, one narrow row per handler and
 * event, range-partitioned by the day of the event's time, so that retention drops whole days ({@link ClaimPartitions})
 * instead of deleting rows. The same claim semantics as {@link IdempotencyStore}, for a scope whose route is a
 * handler's ({@code <event_type>:v<version>:<handler_key>}) and whose key is the event id (a UUID): insert-first on
 * the primary key, replay, conflict (another payload, tenant or actor under the same event id: the key holds neither
 * tenant nor actor, the claim's fingerprint does), leases with fencing, failures kept.
 *
 * <h2>Where a claim lives, and for how long</h2>
 * The day of an event is the UTC day of the time in its UUIDv7 id, so a redelivery always computes the same day and
 * finds the claim. A claim is kept at least the {@linkplain ClaimPolicy#ttl() claim retention} after its event's time:
 * a day's partition is dropped once its last instant is older than the retention. Two kinds of event go to the
 * undated partition instead (day 0), where each row is kept the retention after its claim and deleted by the
 * retention sweep: an event whose id is not a UUIDv7 (it carries no time), and an event first claimed when it is
 * already older than the retention, by the database clock (its day may be gone already). All instances of a service
 * must use one claim retention.
 *
 * <h2>Transactions</h2>
 * Like {@link IdempotencyStore}: statements join the caller's Spring-managed transaction, and run on their own
 * otherwise. A partition that does not exist yet is created first, outside it ({@link ClaimPartitions}); tokens
 * carry the claim's day as their {@link ClaimToken#recordId()}. Thread-safe.
 */
public interface HandlerClaimStore {

    /** The store over {@code dataSource}, whose schema {@link OnceMigrations#migrate} has created. */
    static HandlerClaimStore create(DataSource dataSource) {
        return create(dataSource, ClaimPartitions.create(dataSource, ClaimPartitions.Options.ofDefaults()));
    }

    /** The store over {@code dataSource}, creating missing days through {@code partitions}. */
    static HandlerClaimStore create(DataSource dataSource, ClaimPartitions partitions) {
        return new JdbcHandlerClaimStore(dataSource, partitions);
    }

    /**
     * Claims {@code scope} (a handler's route, an event id) for a payload with fingerprint {@code requestHash}: a
     * fresh claim is {@code processing} under {@code policy}'s lease. The outcomes are {@link IdempotencyStore#claim}'s:
     * a succeeded claim replays, a live lease is in progress, a lapsed one (same payload) or a released one is
     * reclaimed under the next fencing token, a failed one is reclaimed if the policy retries failures, and another
     * payload, tenant or actor under the same event id is a conflict.
     */
    ClaimResult claim(IdempotencyScope scope, String requestHash, ClaimPolicy policy);

    /**
     * Claims every scope whose event the handler has no claim for yet as already {@code succeeded}, in one statement,
     * in the current transaction: one write per claim, for work that commits in this same transaction. Returns, index
     * by index, whether the claim was fresh; claim the others with {@link #claim}. Duplicate scopes are claimed once.
     */
    boolean[] claimCompleted(List<IdempotencyScope> scopes, List<String> requestHashes, ClaimPolicy policy);

    /** Completes every claim in one statement; returns how many tokens still owned their claim. */
    int markAllSucceeded(List<ClaimToken> tokens);

    /** Moves the claim to {@code succeeded}; joins the current transaction. */
    TransitionResult markSucceeded(ClaimToken token);

    /** Moves the claim to {@code failed}, keeping {@code reason} (its first 500 characters) for operators. */
    TransitionResult markFailed(ClaimToken token, String reason);

    /** Gives the claim up: the next delivery claims it afresh, whatever its payload. */
    TransitionResult release(ClaimToken token);
}
