package dev.once.idempotency;

import dev.once.OnceException;
import dev.once.idempotency.ClaimResult.Claimed;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The claim: insert-first on the scope's unique constraint, never check-then-insert.
 *
 * <p><b>Fresh key, the hot path: one round trip.</b> {@link #INSERT_FRESH} is a plain
 * {@code INSERT … ON CONFLICT DO NOTHING RETURNING}; when it returns a row the caller owns a brand-new record.
 *
 * <p><b>A repeat: one more, a read.</b> When the key exists the insert writes nothing, and {@link #READ_EXISTING}
 * reads the record that holds it; unless that record is reclaimable it decides the answer: a replay, a conflict, in
 * progress or a stored failure. (Folding the read into the insert's statement saves replays a round trip but cost
 * every fresh claim 7-29 % in the claim benchmark, and 25-39 % as a PL/pgSQL function; docs/BENCHMARKS.md.)
 * Outside a transaction it commits asynchronously ({@link #INSERT_FRESH_ASYNC_COMMIT}) unless the policy asks for a
 * {@linkplain ClaimPolicy#durable() durable} claim.
 *
 * <p><b>A reclaimable record, or a race: one more statement.</b> {@link #CLAIM} is a single {@code INSERT … ON CONFLICT … DO UPDATE …
 * WHERE <reclaimable> RETURNING} that either takes the record over or reports what holds it. It first reads the current
 * record under the statement's snapshot ({@code existing}); only when there is none or it is reclaimable does it attempt
 * the insert, so a replay, a conflict or an in-progress answer is a pure indexed read that takes no row lock and writes
 * nothing. The {@code ON CONFLICT} arbitrates every race on the unique constraint: a concurrent claimant waits for the
 * winner's transaction and re-checks the reclaimable condition against the committed row. A claimant that loses such a
 * race sees either no row (the winner committed after this statement's snapshot) or a row its snapshot still thought
 * reclaimable; it runs the statement again, which under READ COMMITTED reads the winner's committed record.
 */
final class ClaimStatement {

    /**
     * The fresh-key insert, a plain {@code INSERT … ON CONFLICT DO NOTHING RETURNING}; placeholders: a leading
     * common table expression and the {@code FROM} that uses it (see {@link #INSERT_FRESH_ASYNC_COMMIT}). Parameters
     * 1-7 as {@link #bindClaim}.
     */
    private static final String INSERT_FRESH_TEMPLATE = """
            %sINSERT INTO idempotency_record
                (tenant_id, user_id, route, idempotency_key, request_hash, status, locked_until, expires_at)
            SELECT ?, ?, ?, ?, ?, 'processing',
                   statement_timestamp() + CAST(? AS bigint) * interval '1 millisecond', statement_timestamp() + CAST(? AS bigint) * interval '1 millisecond'
            %sON CONFLICT ON CONSTRAINT idempotency_record_scope_uk DO NOTHING
            RETURNING id
            """;

    /** A fresh key, the common case, committing with the caller's durability: in a transaction, or a durable claim. */
    static final String INSERT_FRESH = INSERT_FRESH_TEMPLATE.formatted("", "");

    /**
     * {@link #INSERT_FRESH} for a claim made outside any transaction: it commits with {@code synchronous_commit=off},
     * for this statement only. The claim is visible to every session at once; it becomes durable with the next
     * synchronous commit on the server, at the latest the commit of the work built on it (WAL is flushed in order).
     * A crash can only forget a claim that nothing durable in the database was built on; the retry then claims
     * afresh, as after a lapsed lease, under a new record id (so work that names things outside the database after
     * the record asks for a {@linkplain ClaimPolicy#durable() durable} claim). The crash may also rewind the id
     * sequence and hand the forgotten claim's id out again: that is why every fenced statement matches the claim's
     * scope as well as its id and fence ({@link ClaimOwner}). Inside a caller's transaction the caller's durability
     * applies unchanged.
     */
    static final String INSERT_FRESH_ASYNC_COMMIT = INSERT_FRESH_TEMPLATE.formatted(
            "WITH durability AS (SELECT set_config('synchronous_commit', 'off', true))\n", "FROM durability\n");

    /**
     * Whether record {@code r} may be claimed by request {@code req} (its {@code request_hash} and
     * {@code retry_failed}): released or past TTL (unless its lease is live); or the same request and a lapsed lease
     * or an allowed retry of a failure. {@link #CLAIM}'s {@code ON CONFLICT … WHERE} re-checks the same rule against
     * the committed row.
     */
    static final String RECLAIMABLE = """
            (r.status = 'expired'
              OR (r.expires_at <= statement_timestamp() AND (r.status <> 'processing' OR r.locked_until <= statement_timestamp()))
              OR (r.request_hash = req.request_hash
                  AND ((r.status = 'processing' AND r.locked_until <= statement_timestamp())
                    OR (r.status = 'failed' AND req.retry_failed))))""";

    /**
     * A repeat, after the insert found the key taken: the record that holds it, with whether it is reclaimable, as
     * {@link #CLAIM} reports it. A pure indexed read. Parameters: the request hash, whether a failed record may be
     * retried, then the scope.
     */
    static final String READ_EXISTING = """
            WITH req AS (SELECT CAST(? AS text) AS request_hash, CAST(? AS boolean) AS retry_failed)
            SELECT false AS claimed, r.id, r.status, r.request_hash, r.fencing_token, r.locked_until, r.response_code,
                   r.response_content_type, r.response_headers::text AS response_headers, r.response_body,
                   r.response_body_omitted, r.task_id, r.outbox_event_id, %s AS reclaimable,
                   statement_timestamp() AS db_now
            FROM idempotency_record r, req
            WHERE r.tenant_id = ? AND r.user_id = ? AND r.route = ? AND r.idempotency_key = ?
            """.formatted(RECLAIMABLE);

    /** Reclaimable: released or past TTL (unless its lease is live); or same request and a lapsed lease / allowed retry. */
    static final String CLAIM = """
            WITH req AS (
                SELECT CAST(? AS text) AS tenant_id, CAST(? AS text) AS user_id, CAST(? AS text) AS route,
                       CAST(? AS text) AS idempotency_key, CAST(? AS text) AS request_hash,
                       statement_timestamp() + CAST(? AS bigint) * interval '1 millisecond' AS locked_until,
                       statement_timestamp() + CAST(? AS bigint) * interval '1 millisecond' AS expires_at,
                       CAST(? AS boolean) AS retry_failed
            ), existing AS (
                SELECT r.id, r.status, r.request_hash, r.fencing_token, r.locked_until, r.expires_at,
                       r.response_code, r.response_content_type, r.response_headers::text AS response_headers,
                       r.response_body, r.response_body_omitted, r.task_id, r.outbox_event_id,
                       %s AS reclaimable
                FROM idempotency_record r
                JOIN req ON r.tenant_id = req.tenant_id AND r.user_id = req.user_id
                        AND r.route = req.route AND r.idempotency_key = req.idempotency_key
            ), claimed AS (
                INSERT INTO idempotency_record AS r
                    (tenant_id, user_id, route, idempotency_key, request_hash, status, locked_until, expires_at)
                SELECT tenant_id, user_id, route, idempotency_key, request_hash, 'processing', locked_until, expires_at
                FROM req
                WHERE NOT EXISTS (SELECT 1 FROM existing WHERE NOT existing.reclaimable)
                ON CONFLICT ON CONSTRAINT idempotency_record_scope_uk DO UPDATE
                SET request_hash = EXCLUDED.request_hash, status = 'processing', fencing_token = r.fencing_token + 1,
                    response_code = NULL, response_content_type = NULL, response_headers = NULL,
                    response_body = NULL, response_body_omitted = false, task_id = NULL, outbox_event_id = NULL,
                    locked_until = EXCLUDED.locked_until, expires_at = EXCLUDED.expires_at,
                    claimed_at = statement_timestamp(), updated_at = statement_timestamp()
                WHERE r.status = 'expired'
                   OR (r.expires_at <= statement_timestamp() AND (r.status <> 'processing' OR r.locked_until <= statement_timestamp()))
                   OR (r.request_hash = EXCLUDED.request_hash
                       AND ((r.status = 'processing' AND r.locked_until <= statement_timestamp())
                         OR (r.status = 'failed' AND (SELECT retry_failed FROM req))))
                RETURNING r.id, r.fencing_token, r.locked_until
            )
            SELECT true AS claimed, c.id, 'processing' AS status, CAST(NULL AS text) AS request_hash, c.fencing_token,
                   c.locked_until, CAST(NULL AS integer) AS response_code, CAST(NULL AS text) AS response_content_type,
                   CAST(NULL AS text) AS response_headers, CAST(NULL AS bytea) AS response_body,
                   false AS response_body_omitted, CAST(NULL AS text) AS task_id, CAST(NULL AS uuid) AS outbox_event_id,
                   CASE WHEN e.id IS NULL THEN 'FRESH'
                        WHEN e.status = 'processing' AND e.expires_at > statement_timestamp() THEN 'LEASE_RECLAIMED'
                        WHEN e.status = 'failed' AND e.expires_at > statement_timestamp() THEN 'FAILED_RETRY'
                        ELSE 'EXPIRED_REUSED' END AS kind,
                   false AS reclaimable, statement_timestamp() AS db_now
            FROM claimed c LEFT JOIN existing e ON true
            UNION ALL
            SELECT false, e.id, e.status, e.request_hash, e.fencing_token, e.locked_until, e.response_code,
                   e.response_content_type, e.response_headers, e.response_body, e.response_body_omitted, e.task_id,
                   e.outbox_event_id, NULL, e.reclaimable, statement_timestamp()
            FROM existing e
            WHERE NOT EXISTS (SELECT 1 FROM claimed)
            """.formatted(RECLAIMABLE);

    /** Each extra attempt follows a lost race that the previous attempt's outcome proves was decided. */
    private static final int MAX_ATTEMPTS = 8;

    private final JdbcTemplate jdbc;

    ClaimStatement(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    ClaimResult claim(IdempotencyScope scope, String requestHash, ClaimPolicy policy) {
        if (requestHash == null || requestHash.isEmpty()) {
            throw new IllegalArgumentException("requestHash is required; compute it with RequestFingerprint");
        }
        String insert = freshInsert(policy, TransactionSynchronizationManager.isActualTransactionActive());
        Long freshId = jdbc.query(insert, ps -> bindClaim(ps, scope, requestHash, policy),
                rs -> rs.next() ? rs.getLong(1) : null);
        if (freshId != null) {
            return new Claimed(new ClaimToken(scope, freshId, 1), Claimed.Kind.FRESH);
        }
        ClaimResult existing = jdbc.query(READ_EXISTING, ps -> {
            ps.setString(1, requestHash);
            ps.setBoolean(2, policy.retryFailed());
            ps.setString(3, scope.tenantId());
            ps.setString(4, scope.userId());
            ps.setString(5, scope.route().value());
            ps.setString(6, scope.key().value());
        }, rs -> rs.next() ? outcome(scope, requestHash, rs) : null);
        if (existing != null) {
            return existing; // decided by the record that holds the key: replay, conflict, in progress, failed
        }
        // the key's record is reclaimable, or was released or deleted since the insert saw it
        for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
            ClaimResult result = jdbc.query(CLAIM, ps -> {
                bindClaim(ps, scope, requestHash, policy);
                ps.setBoolean(8, policy.retryFailed());
            }, rs -> rs.next() ? outcome(scope, requestHash, rs) : null);
            if (result != null) {
                return result;
            }
        }
        throw new OnceException("Claim of " + scope + " did not settle after " + MAX_ATTEMPTS
                + " attempts; is the transaction isolation READ COMMITTED?");
    }

    /** Asynchronous commit only for a claim that commits on its own and was not asked to be durable. */
    static String freshInsert(ClaimPolicy policy, boolean inTransaction) {
        return policy.durable() || inTransaction ? INSERT_FRESH : INSERT_FRESH_ASYNC_COMMIT;
    }

    /** Parameters 1-7, shared by both statements: scope, request hash, lease and TTL. */
    private static void bindClaim(PreparedStatement ps, IdempotencyScope scope, String requestHash, ClaimPolicy policy)
            throws SQLException {
        ps.setString(1, scope.tenantId());
        ps.setString(2, scope.userId());
        ps.setString(3, scope.route().value());
        ps.setString(4, scope.key().value());
        ps.setString(5, requestHash);
        ps.setLong(6, policy.lease().toMillis());
        ps.setLong(7, policy.ttl().toMillis());
    }

    /** The outcome of one row, or {@code null} when this attempt lost a race and must be repeated. */
    private static ClaimResult outcome(IdempotencyScope scope, String requestHash, ResultSet rs) throws SQLException {
        if (rs.getBoolean("claimed")) {
            ClaimToken token = new ClaimToken(scope, rs.getLong("id"), rs.getLong("fencing_token"));
            return new Claimed(token, Claimed.Kind.valueOf(rs.getString("kind")));
        }
        if (rs.getBoolean("reclaimable")) {
            return null;
        }
        String storedHash = rs.getString("request_hash");
        if (!storedHash.equals(requestHash)) {
            return new ClaimResult.Conflict(storedHash);
        }
        return switch (IdempotencyStatus.fromDb(rs.getString("status"))) {
            case SUCCEEDED -> new ClaimResult.Replay(RecordColumns.response(rs), rs.getString("task_id"),
                    RecordColumns.uuid(rs, "outbox_event_id"));
            case FAILED -> new ClaimResult.Failed(RecordColumns.response(rs));
            case PROCESSING -> {
                Instant lockedUntil = RecordColumns.instant(rs, "locked_until");
                Duration retryAfter = Duration.between(RecordColumns.instant(rs, "db_now"), lockedUntil);
                yield new ClaimResult.InProgress(lockedUntil, retryAfter.isNegative() ? Duration.ZERO : retryAfter);
            }
            case EXPIRED -> null; // always reclaimable; reached only if the row changed under us
        };
    }
}
