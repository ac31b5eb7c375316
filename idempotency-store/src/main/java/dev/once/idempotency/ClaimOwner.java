package dev.once.idempotency;

import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * The condition under which a transition applies: the record is the claim's own (same id, same scope), the fence has
 * not moved on, and it is still processing. The scope is part of it because an id alone is not unique over time: a
 * claim committed asynchronously can be forgotten by a database crash, and the crash can rewind the id sequence, so
 * that the forgotten claim's id and first fence are handed to another request, possibly of another tenant. The
 * forgotten claimant's late transition must then match nothing.
 */
final class ClaimOwner {

    /** Six parameters, bound by {@link #bind}. */
    static final String CONDITION = """
            id = ? AND fencing_token = ? AND status = 'processing'
              AND tenant_id = ? AND user_id = ? AND route = ? AND idempotency_key = ?""";

    private ClaimOwner() {
    }

    /** Binds {@link #CONDITION}'s parameters from {@code first}; returns the next parameter's index. */
    static int bind(PreparedStatement ps, int first, ClaimToken token) throws SQLException {
        ps.setLong(first, token.recordId());
        ps.setLong(first + 1, token.fencingToken());
        ps.setString(first + 2, token.scope().tenantId());
        ps.setString(first + 3, token.scope().userId());
        ps.setString(first + 4, token.scope().route().value());
        ps.setString(first + 5, token.scope().key().value());
        return first + 6;
    }
}
