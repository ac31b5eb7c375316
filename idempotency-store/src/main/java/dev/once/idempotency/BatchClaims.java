package dev.once.idempotency;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Claims many fresh keys in one statement (a multi-row {@code INSERT … ON CONFLICT DO NOTHING RETURNING}) and
 * completes many claims in one {@code UPDATE}: the batch path for consumers that handle a whole poll in one
 * transaction. Keys that already exist are not claimed here; the caller claims those one by one with the full
 * statement, which decides replay, conflict or reclaim.
 */
final class BatchClaims {

    static final String INSERT_FRESH_BATCH = """
            INSERT INTO idempotency_record
                (tenant_id, user_id, route, idempotency_key, request_hash, status, locked_until, expires_at)
            SELECT t, u, r, k, h, 'processing',
                   statement_timestamp() + CAST(? AS bigint) * interval '1 millisecond',
                   statement_timestamp() + CAST(? AS bigint) * interval '1 millisecond'
            FROM unnest(CAST(? AS text[]), CAST(? AS text[]), CAST(? AS text[]), CAST(? AS text[]), CAST(? AS text[]))
                 AS x(t, u, r, k, h)
            ON CONFLICT ON CONSTRAINT idempotency_record_scope_uk DO NOTHING
            RETURNING id, tenant_id, user_id, route, idempotency_key
            """;

    /**
     * Fresh keys inserted already completed: one write per claim, for work that commits in the same transaction (a
     * rollback leaves nothing, and a concurrent duplicate waits on the unique key, then finds the claim completed).
     */
    static final String INSERT_COMPLETED_BATCH = """
            INSERT INTO idempotency_record
                (tenant_id, user_id, route, idempotency_key, request_hash, status, response_code,
                 response_content_type, response_body, expires_at)
            SELECT t, u, r, k, h, 'succeeded', ?, ?, ?,
                   statement_timestamp() + CAST(? AS bigint) * interval '1 millisecond'
            FROM unnest(CAST(? AS text[]), CAST(? AS text[]), CAST(? AS text[]), CAST(? AS text[]), CAST(? AS text[]))
                 AS x(t, u, r, k, h)
            ON CONFLICT ON CONSTRAINT idempotency_record_scope_uk DO NOTHING
            RETURNING tenant_id, user_id, route, idempotency_key
            """;

    static final String COMPLETE_BATCH = """
            UPDATE idempotency_record
            SET status = 'succeeded', response_code = ?, response_content_type = ?, response_body = ?,
                locked_until = NULL, updated_at = statement_timestamp()
            FROM unnest(CAST(? AS bigint[]), CAST(? AS bigint[])) AS t(id, fence)
            WHERE idempotency_record.id = t.id AND idempotency_record.fencing_token = t.fence
              AND idempotency_record.status = 'processing'
            """;

    private BatchClaims() {
    }

    /** The tokens of the scopes claimed fresh, index by index; {@code null} where the key already existed. */
    static List<ClaimToken> claimFresh(JdbcTemplate jdbc, List<IdempotencyScope> scopes, List<String> hashes, ClaimPolicy policy) {
        int n = scopes.size();
        String[][] columns = columns(scopes, hashes);
        Map<String, Integer> index = index(scopes);
        List<ClaimToken> tokens = new ArrayList<>(java.util.Collections.nCopies(n, (ClaimToken) null));
        jdbc.query(INSERT_FRESH_BATCH, ps -> {
            ps.setLong(1, policy.lease().toMillis());
            ps.setLong(2, policy.ttl().toMillis());
            for (int c = 0; c < 5; c++) {
                ps.setArray(3 + c, ps.getConnection().createArrayOf("text", columns[c]));
            }
        }, rs -> {
            IdempotencyScope scope = RecordColumns.scope(rs);
            Integer i = index.get(scope.toString());
            if (i != null) {
                tokens.set(i, new ClaimToken(scopes.get(i), rs.getLong("id"), 1));
            }
        });
        return tokens;
    }

    /** Which scopes were fresh and are now claimed completed with {@code response}, index by index. */
    static boolean[] claimCompleted(JdbcTemplate jdbc, List<IdempotencyScope> scopes, List<String> hashes,
                                    ClaimPolicy policy, StoredResponse response) {
        int n = scopes.size();
        String[][] columns = columns(scopes, hashes);
        Map<String, Integer> index = index(scopes);
        boolean[] claimed = new boolean[n];
        jdbc.query(INSERT_COMPLETED_BATCH, ps -> {
            ps.setInt(1, response.statusCode());
            ps.setString(2, response.contentType());
            ps.setBytes(3, response.bodyUnsafe());
            ps.setLong(4, policy.ttl().toMillis());
            for (int c = 0; c < 5; c++) {
                ps.setArray(5 + c, ps.getConnection().createArrayOf("text", columns[c]));
            }
        }, rs -> {
            Integer i = index.get(RecordColumns.scope(rs).toString());
            if (i != null) {
                claimed[i] = true;
            }
        });
        return claimed;
    }

    private static String[][] columns(List<IdempotencyScope> scopes, List<String> hashes) {
        int n = scopes.size();
        String[][] columns = new String[5][n];
        for (int i = 0; i < n; i++) {
            IdempotencyScope s = scopes.get(i);
            columns[0][i] = s.tenantId();
            columns[1][i] = s.userId();
            columns[2][i] = s.route().value();
            columns[3][i] = s.key().value();
            columns[4][i] = hashes.get(i);
        }
        return columns;
    }

    /** Each scope's first index: duplicates in one call are claimed once, by the first. */
    private static Map<String, Integer> index(List<IdempotencyScope> scopes) {
        Map<String, Integer> index = new HashMap<>();
        for (int i = 0; i < scopes.size(); i++) {
            index.putIfAbsent(scopes.get(i).toString(), i);
        }
        return index;
    }

    /** Completes every claim in {@code tokens} with {@code response}; returns how many were still owned. */
    static int completeAll(JdbcTemplate jdbc, List<ClaimToken> tokens, StoredResponse response) {
        Long[] ids = tokens.stream().map(ClaimToken::recordId).toArray(Long[]::new);
        Long[] fences = tokens.stream().map(ClaimToken::fencingToken).toArray(Long[]::new);
        return jdbc.update(COMPLETE_BATCH, ps -> {
            ps.setInt(1, response.statusCode());
            ps.setString(2, response.contentType());
            ps.setBytes(3, response.bodyUnsafe());
            ps.setArray(4, ps.getConnection().createArrayOf("bigint", ids));
            ps.setArray(5, ps.getConnection().createArrayOf("bigint", fences));
        });
    }
}
