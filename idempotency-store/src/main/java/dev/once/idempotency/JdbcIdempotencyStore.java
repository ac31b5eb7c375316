package dev.once.idempotency;

import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * {@link IdempotencyStore} over JDBC. Statements go through Spring's {@link JdbcTemplate}, which takes the connection
 * of the current Spring-managed transaction (JPA or JDBC) when there is one; that is how transitions join it.
 */
final class JdbcIdempotencyStore implements IdempotencyStore {

    /** Every transition is applied only to the claim that owns the record: {@link ClaimOwner#CONDITION}. */
    static final String COMPLETE = """
            UPDATE idempotency_record
            SET status = ?, response_code = ?, response_content_type = ?, response_headers = CAST(? AS jsonb),
                response_body = ?, response_body_omitted = ?,
                task_id = COALESCE(?, task_id), outbox_event_id = COALESCE(?, outbox_event_id),
                locked_until = NULL, updated_at = statement_timestamp()
            WHERE %s
            """.formatted(ClaimOwner.CONDITION);

    static final String BIND_TASK = """
            UPDATE idempotency_record SET task_id = ?, updated_at = statement_timestamp()
            WHERE %s
            """.formatted(ClaimOwner.CONDITION);

    static final String BIND_OUTBOX_EVENT = """
            UPDATE idempotency_record SET outbox_event_id = ?, updated_at = statement_timestamp()
            WHERE %s
            """.formatted(ClaimOwner.CONDITION);

    /** Released records expire at once, so that any request, whatever its body, may claim the key next. */
    static final String RELEASE = """
            UPDATE idempotency_record SET status = 'expired', locked_until = NULL, expires_at = statement_timestamp(), updated_at = statement_timestamp()
            WHERE %s
            """.formatted(ClaimOwner.CONDITION);

    private final DataSource dataSource;
    private final JdbcTemplate jdbc;
    /** Appends the events of a completion sent with the commit, after it. */
    private final dev.once.outbox.OutboxWriter outbox;
    private final IdempotencyStoreOptions options;
    private final ClaimStatement claims;

    JdbcIdempotencyStore(DataSource dataSource, IdempotencyStoreOptions options) {
        this.dataSource = dataSource;
        this.jdbc = new JdbcTemplate(dataSource);
        this.outbox = dev.once.outbox.OutboxWriter.create(dataSource);
        this.options = options;
        this.claims = new ClaimStatement(jdbc);
    }

    @Override
    public ClaimResult claim(IdempotencyScope scope, String requestHash, ClaimPolicy policy) {
        requireOwnTransaction();
        return claims.claim(scope, requestHash, policy);
    }

    /** See {@link #requireOwnTransaction(DataSource)}. */
    private void requireOwnTransaction() {
        requireOwnTransaction(dataSource);
    }

    /**
     * A Spring transaction is active but holds no connection of the store's {@code dataSource} (its transaction manager
     * was built over another object, say the pool beneath an {@code OnceDataSource}): the store's statements would
     * commit on their own, a claim would survive the rollback of the work it guards. Refused, once per call, at the
     * cost of a thread-local look-up. {@link JdbcHandlerClaimStore} asks the same.
     */
    static void requireOwnTransaction(DataSource dataSource) {
        if (TransactionSynchronizationManager.isActualTransactionActive()
                && !TransactionSynchronizationManager.hasResource(dataSource)) {
            throw new dev.once.OnceConfigurationException("A transaction is active, but not on the idempotency "
                    + "store's DataSource (" + dataSource + "), so the store's statements would commit apart from it",
                    "Build the transaction manager over the same DataSource bean the store uses (with Spring Boot: "
                            + "the DataSource bean, which Once wraps in OnceDataSource), not over the pool beneath it");
        }
    }

    @Override
    public List<ClaimToken> claimFresh(List<IdempotencyScope> scopes, List<String> requestHashes, ClaimPolicy policy) {
        requireOwnTransaction();
        if (scopes.size() != requestHashes.size()) {
            throw new IllegalArgumentException("one request hash per scope");
        }
        return scopes.isEmpty() ? List.of() : BatchClaims.claimFresh(jdbc, scopes, requestHashes, policy);
    }

    @Override
    public boolean[] claimCompleted(List<IdempotencyScope> scopes, List<String> requestHashes, ClaimPolicy policy,
                                    StoredResponse response) {
        requireOwnTransaction();
        if (scopes.size() != requestHashes.size()) {
            throw new IllegalArgumentException("one request hash per scope");
        }
        return scopes.isEmpty() ? new boolean[0]
                : BatchClaims.claimCompleted(jdbc, scopes, requestHashes, policy, withinLimit(response));
    }

    @Override
    public int markAllSucceeded(List<ClaimToken> tokens, StoredResponse response) {
        return tokens.isEmpty() ? 0 : BatchClaims.completeAll(jdbc, tokens, withinLimit(response));
    }

    @Override
    public TransitionResult markSucceeded(ClaimToken token, StoredResponse response) {
        return complete(token, IdempotencyStatus.SUCCEEDED, response, null, null);
    }

    @Override
    public TransitionResult markSucceeded(ClaimToken token, StoredResponse response, String taskId, UUID outboxEventId) {
        return complete(token, IdempotencyStatus.SUCCEEDED, response, taskId, outboxEventId);
    }

    @Override
    public TransitionResult markSucceededWithEvents(ClaimToken token, StoredResponse response, String taskId,
                                                    List<dev.once.outbox.OutboxEvent> events) {
        if (events.isEmpty()) {
            return complete(token, IdempotencyStatus.SUCCEEDED, response, taskId, null);
        }
        requireIds(events);
        return CompleteWithEvents.now(jdbc, token, withinLimit(response), taskId, events)
                ? TransitionResult.APPLIED : TransitionResult.STALE;
    }

    @Override
    public void markSucceededAtCommit(ClaimToken token, StoredResponse response, String taskId,
                                      List<dev.once.outbox.OutboxEvent> events) {
        requireOwnTransaction();
        requireIds(events);
        CompleteWithEvents.atCommit(jdbc, outbox, token, withinLimit(response), taskId, List.copyOf(events));
    }

    private static void requireIds(List<dev.once.outbox.OutboxEvent> events) {
        for (dev.once.outbox.OutboxEvent event : events) {
            if (event.id() == null) {
                throw new IllegalArgumentException("Events completed with a claim must carry their id; use UuidV7.next()");
            }
        }
    }

    @Override
    public TransitionResult markFailed(ClaimToken token, StoredResponse response) {
        return complete(token, IdempotencyStatus.FAILED, response, null, null);
    }

    private TransitionResult complete(ClaimToken token, IdempotencyStatus status, StoredResponse response,
                                      String taskId, UUID outboxEventId) {
        requireOwnTransaction();
        StoredResponse stored = withinLimit(response);
        int rows = jdbc.update(COMPLETE, ps -> {
            ps.setString(1, status.dbValue());
            ps.setInt(2, stored.statusCode());
            ps.setString(3, stored.contentType());
            ps.setString(4, RecordColumns.headersJson(stored.headers()));
            ps.setBytes(5, stored.bodyOmitted() ? null : stored.bodyUnsafe());
            ps.setBoolean(6, stored.bodyOmitted());
            ps.setString(7, taskId);
            ps.setObject(8, outboxEventId);
            ClaimOwner.bind(ps, 9, token);
        });
        return result(rows);
    }

    private StoredResponse withinLimit(StoredResponse response) {
        return options.limit(response);
    }

    @Override
    public TransitionResult bindTask(ClaimToken token, String taskId) {
        return result(jdbc.update(BIND_TASK, ps -> {
            ps.setString(1, taskId);
            ClaimOwner.bind(ps, 2, token);
        }));
    }

    @Override
    public TransitionResult bindOutboxEvent(ClaimToken token, UUID eventId) {
        return result(jdbc.update(BIND_OUTBOX_EVENT, ps -> {
            ps.setObject(1, eventId);
            ClaimOwner.bind(ps, 2, token);
        }));
    }

    @Override
    public TransitionResult release(ClaimToken token) {
        return result(jdbc.update(RELEASE, ps -> ClaimOwner.bind(ps, 1, token)));
    }

    private static TransitionResult result(int rows) {
        return rows == 1 ? TransitionResult.APPLIED : TransitionResult.STALE;
    }
}
