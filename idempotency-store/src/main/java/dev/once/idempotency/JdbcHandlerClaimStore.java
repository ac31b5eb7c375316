package dev.once.idempotency;

import dev.once.OnceException;
import dev.once.idempotency.ClaimResult.Claimed;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * {@link HandlerClaimStore} over JDBC, on {@code once_handler_claim}. Where a claim lives is decided in the statement
 * that inserts it, by the database clock ({@link #PLACED}), and every later statement addresses that row by its whole
 * key, day included, so that PostgreSQL reads one partition.
 */
final class JdbcHandlerClaimStore implements HandlerClaimStore {

    static final int PROCESSING = 1;
    static final int SUCCEEDED = 2;
    static final int FAILED = 3;
    static final int RELEASED = 4;
    static final int REASON_LENGTH = 500;

    /**
     * The day a claim lives in: its event's day when the event is younger than the retention, else 0 (undated), as
     * is an event whose id carries no time ({@code event_ms} NULL).
     */
    static final String DAY = """
            CASE WHEN event_ms > CAST(EXTRACT(EPOCH FROM statement_timestamp()) * 1000 AS bigint) - retention_ms
                 THEN CAST(event_ms / 86400000 AS integer) ELSE 0 END""";

    /** An undated claim is kept the retention after it was claimed; a dated one as long as its day. */
    static final String KEPT_UNTIL = """
            CASE WHEN day = 0 THEN statement_timestamp() + retention_ms * interval '1 millisecond' END""";

    /** One claim's values and its day; a leading CTE may be added (%s). Parameters 1-7 as {@link #bindClaim}. */
    private static final String PLACED = """
            WITH %sreq AS (
                SELECT CAST(? AS integer) AS route_id, CAST(? AS uuid) AS event_id, CAST(? AS text) AS tenant_id,
                       CAST(? AS text) AS actor_id, decode(CAST(? AS text), 'hex') AS payload_hash,
                       statement_timestamp() + CAST(? AS bigint) * interval '1 millisecond' AS locked_until,
                       CAST(? AS bigint) AS retention_ms, CAST(? AS bigint) AS event_ms
            ), placed AS (
                SELECT req.*, %s AS day FROM req
            )""".formatted("%s", DAY);

    /**
     * The fresh claim: {@code processing} under a lease, inserted unless the key exists. Returns the claim's day
     * whether it was fresh or not, so the next statements address the row the insert met.
     */
    private static final String INSERT_FRESH_TEMPLATE = PLACED + """
            , fresh AS (
                INSERT INTO once_handler_claim (route_id, day, event_id, status, tenant_id, actor_id, payload_hash,
                                                locked_until, kept_until)
                SELECT route_id, day, event_id, 1, tenant_id, actor_id, payload_hash, locked_until, %s
                FROM placed%s
                ON CONFLICT DO NOTHING
                RETURNING day
            )
            SELECT (SELECT day FROM placed) AS day, EXISTS (SELECT 1 FROM fresh) AS fresh
            """.formatted(KEPT_UNTIL, "%s");

    static final String INSERT_FRESH = INSERT_FRESH_TEMPLATE.formatted("", "");

    /** {@link #INSERT_FRESH} outside a transaction: it commits asynchronously, as {@link ClaimStatement}'s does. */
    static final String INSERT_FRESH_ASYNC_COMMIT = INSERT_FRESH_TEMPLATE.formatted(
            "durability AS (SELECT set_config('synchronous_commit', 'off', true)), ", ", durability");

    /** Whether claim {@code c} may be taken by a claimant with payload hash (param) and retry-failed (param). */
    static final String RECLAIMABLE = """
            (c.status = 4
              OR (c.kept_until <= statement_timestamp() AND (c.status <> 1 OR c.locked_until <= statement_timestamp()))
              OR (c.payload_hash = decode(CAST(? AS text), 'hex')
                  AND ((c.status = 1 AND c.locked_until <= statement_timestamp()) OR (c.status = 3 AND CAST(? AS boolean)))))""";

    /** The claim the insert met. Parameters: hash, retry-failed, then route id, event id, day. */
    static final String READ = """
            SELECT c.status, encode(c.payload_hash, 'hex') AS payload_hash, c.fencing, c.locked_until, c.reason,
                   %s AS reclaimable, statement_timestamp() AS db_now
            FROM once_handler_claim c
            WHERE c.route_id = ? AND c.event_id = ? AND c.day = ?
            """.formatted(RECLAIMABLE);

    /** Takes a reclaimable claim over under the next fence, if it is still the one that was read. */
    static final String RECLAIM = """
            UPDATE once_handler_claim c
            SET status = 1, fencing = c.fencing + 1, tenant_id = ?, actor_id = ?, payload_hash = decode(?, 'hex'),
                locked_until = statement_timestamp() + CAST(? AS bigint) * interval '1 millisecond',
                kept_until = CASE WHEN c.day = 0 THEN statement_timestamp() + CAST(? AS bigint) * interval '1 millisecond' END,
                failed_at = NULL, reason = NULL
            WHERE c.route_id = ? AND c.event_id = ? AND c.day = ? AND c.fencing = ? AND %s
            RETURNING c.fencing
            """.formatted(RECLAIMABLE);

    /** Fresh claims inserted already succeeded, many in one statement. */
    static final String INSERT_COMPLETED_BATCH = """
            WITH k AS (SELECT CAST(? AS bigint) AS retention_ms),
            x AS (
                SELECT r, e, t, a, decode(h, 'hex') AS h, %s AS day, retention_ms
                FROM unnest(CAST(? AS integer[]), CAST(? AS uuid[]), CAST(? AS text[]), CAST(? AS text[]),
                            CAST(? AS text[]), CAST(? AS bigint[])) AS u(r, e, t, a, h, event_ms), k
            )
            INSERT INTO once_handler_claim (route_id, day, event_id, status, tenant_id, actor_id, payload_hash, kept_until)
            SELECT r, day, e, 2, t, a, h, %s
            FROM x
            ON CONFLICT DO NOTHING
            RETURNING route_id, event_id
            """.formatted(DAY, KEPT_UNTIL);

    /** A transition of the claim's owner: same key, same fence, still processing, same tenant and actor. */
    static final String COMPLETE = """
            UPDATE once_handler_claim
            SET status = ?, locked_until = NULL, failed_at = CASE WHEN ? THEN statement_timestamp() END, reason = ?
            WHERE route_id = ? AND event_id = ? AND day = ? AND fencing = ? AND status = 1 AND tenant_id = ? AND actor_id = ?
            """;

    static final String COMPLETE_BATCH = """
            UPDATE once_handler_claim c SET status = 2, locked_until = NULL
            FROM unnest(CAST(? AS integer[]), CAST(? AS uuid[]), CAST(? AS integer[]), CAST(? AS integer[])) AS t(r, e, d, f)
            WHERE c.route_id = t.r AND c.event_id = t.e AND c.day = t.d AND c.fencing = t.f AND c.status = 1
            """;

    private static final int MAX_ATTEMPTS = 8;
    private static final long DAY_MILLIS = 86_400_000L;

    private final DataSource dataSource;
    private final JdbcTemplate jdbc;
    private final ClaimPartitions partitions;
    private final HandlerRoutes routes;

    JdbcHandlerClaimStore(DataSource dataSource, ClaimPartitions partitions) {
        this.dataSource = dataSource;
        this.jdbc = new JdbcTemplate(dataSource);
        this.partitions = partitions;
        this.routes = new HandlerRoutes(dataSource);
    }

    /** An event as a claim row keys it: its id, and the time in it when it is a UUIDv7 ({@code null} otherwise). */
    record EventKey(UUID id, Long millis) {

        static EventKey of(IdempotencyScope scope) {
            UUID id;
            try {
                id = UUID.fromString(scope.key().value());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("A handler's claim is keyed by its event id, a UUID; got "
                        + scope.key().value(), e);
            }
            return new EventKey(id, id.version() == 7 ? id.getMostSignificantBits() >>> 16 : null);
        }

        /** The day of the event, by its id; {@code null} when the id carries no time. */
        Integer day() {
            return millis == null ? null : (int) Math.floorDiv(millis, DAY_MILLIS);
        }
    }

    /**
     * What a claim's {@code payload_hash} holds: the first 16 bytes of
     * {@code sha256(sha256(tenant) || sha256(actor) || fingerprint)}, in hex. The key holds no tenant or actor, so they
     * are part of the claim's identity here: the same event id under another tenant or actor is a conflict, never the
     * first one's redelivery.
     */
    static String payloadHash(IdempotencyScope scope, String requestHash) {
        if (requestHash == null || requestHash.isEmpty()) {
            throw new IllegalArgumentException("requestHash is required; compute it with RequestFingerprint");
        }
        try {
            MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
            byte[] tenant = sha256.digest(scope.tenantId().getBytes(StandardCharsets.UTF_8));
            byte[] actor = sha256.digest(scope.userId().getBytes(StandardCharsets.UTF_8));
            sha256.update(tenant);
            sha256.update(actor);
            byte[] digest = sha256.digest(requestHash.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The partition of the event's day exists before a statement may place a claim in it. */
    private EventKey prepare(IdempotencyScope scope) {
        EventKey key = EventKey.of(scope);
        if (key.day() != null) {
            partitions.ensure(key.day());
        }
        return key;
    }

    @Override
    public ClaimResult claim(IdempotencyScope scope, String requestHash, ClaimPolicy policy) {
        requireOwnTransaction();
        EventKey key = prepare(scope);
        String hash = payloadHash(scope, requestHash);
        int routeId = routes.id(scope.route());
        String insert = policy.durable() || TransactionSynchronizationManager.isActualTransactionActive()
                ? INSERT_FRESH : INSERT_FRESH_ASYNC_COMMIT;
        for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
            int[] placed = placeFresh(insert, scope, routeId, key, hash, policy);
            int day = placed[0];
            if (placed[1] == 1) {
                return new Claimed(new ClaimToken(scope, day, 1), Claimed.Kind.FRESH);
            }
            ClaimResult result = existing(scope, routeId, key, day, hash, policy);
            if (result != null) {
                return result;
            }
        }
        throw new OnceException("Claim of " + scope + " did not settle after " + MAX_ATTEMPTS
                + " attempts; is the transaction isolation READ COMMITTED?");
    }

    /** The claim's day and whether it was fresh (1). */
    private int[] placeFresh(String insert, IdempotencyScope scope, int routeId, EventKey key, String hash,
                             ClaimPolicy policy) {
        return jdbc.query(insert, ps -> {
            ps.setInt(1, routeId);
            ps.setObject(2, key.id());
            ps.setString(3, scope.tenantId());
            ps.setString(4, scope.userId());
            ps.setString(5, hash);
            ps.setLong(6, policy.lease().toMillis());
            ps.setLong(7, policy.ttl().toMillis());
            ps.setObject(8, key.millis(), java.sql.Types.BIGINT);
        }, rs -> {
            rs.next();
            return new int[] {rs.getInt("day"), rs.getBoolean("fresh") ? 1 : 0};
        });
    }

    /**
     * What the claim the insert met decides: replay, conflict, in progress or failed; or the claim taken over when it
     * is reclaimable; {@code null} when it changed meanwhile (the caller starts again).
     */
    private ClaimResult existing(IdempotencyScope scope, int routeId, EventKey key, int day, String hash,
                                 ClaimPolicy policy) {
        Existing found = jdbc.query(READ, ps -> {
            ps.setString(1, hash);
            ps.setBoolean(2, policy.retryFailed());
            ps.setInt(3, routeId);
            ps.setObject(4, key.id());
            ps.setInt(5, day);
        }, rs -> rs.next() ? new Existing(rs.getInt("status"), rs.getString("payload_hash"), rs.getInt("fencing"),
                RecordColumns.instant(rs, "locked_until"), rs.getString("reason"), rs.getBoolean("reclaimable"),
                RecordColumns.instant(rs, "db_now")) : null);
        if (found == null) {
            return null; // deleted since the insert met it: its day dropped, or swept
        }
        if (!found.reclaimable()) {
            return found.outcome(hash);
        }
        Integer fence = jdbc.query(RECLAIM, ps -> {
            ps.setString(1, scope.tenantId());
            ps.setString(2, scope.userId());
            ps.setString(3, hash);
            ps.setLong(4, policy.lease().toMillis());
            ps.setLong(5, policy.ttl().toMillis());
            ps.setInt(6, routeId);
            ps.setObject(7, key.id());
            ps.setInt(8, day);
            ps.setInt(9, found.fencing());
            ps.setString(10, hash);
            ps.setBoolean(11, policy.retryFailed());
        }, rs -> rs.next() ? rs.getInt(1) : null);
        if (fence == null) {
            return null; // another claimant took it first
        }
        return new Claimed(new ClaimToken(scope, day, fence), found.kind());
    }

    private record Existing(int status, String hash, int fencing, Instant lockedUntil, String reason,
                            boolean reclaimable, Instant dbNow) {

        ClaimResult outcome(String requestHash) {
            if (!hash.equals(requestHash)) {
                return new ClaimResult.Conflict(hash);
            }
            return switch (status) {
                case SUCCEEDED -> new ClaimResult.Replay(StoredResponse.of(200, null, new byte[0]), null, null);
                case FAILED -> new ClaimResult.Failed(StoredResponse.of(500, "text/plain", reason == null ? "" : reason));
                case PROCESSING -> {
                    Duration retryAfter = Duration.between(dbNow, lockedUntil);
                    yield new ClaimResult.InProgress(lockedUntil, retryAfter.isNegative() ? Duration.ZERO : retryAfter);
                }
                default -> null; // released: always reclaimable, reached only if it changed under us
            };
        }

        Claimed.Kind kind() {
            return switch (status) {
                case PROCESSING -> Claimed.Kind.LEASE_RECLAIMED;
                case FAILED -> Claimed.Kind.FAILED_RETRY;
                default -> Claimed.Kind.EXPIRED_REUSED;
            };
        }
    }

    @Override
    public boolean[] claimCompleted(List<IdempotencyScope> scopes, List<String> requestHashes, ClaimPolicy policy) {
        requireOwnTransaction();
        int n = scopes.size();
        if (n != requestHashes.size()) {
            throw new IllegalArgumentException("one request hash per scope");
        }
        boolean[] claimed = new boolean[n];
        if (n == 0) {
            return claimed;
        }
        Integer[] routeIds = new Integer[n];
        UUID[] ids = new UUID[n];
        String[] tenants = new String[n];
        String[] actors = new String[n];
        String[] hashes = new String[n];
        Long[] millis = new Long[n];
        Map<String, Integer> index = new HashMap<>();
        for (int i = 0; i < n; i++) {
            IdempotencyScope scope = scopes.get(i);
            EventKey key = prepare(scope);
            routeIds[i] = routes.id(scope.route());
            ids[i] = key.id();
            tenants[i] = scope.tenantId();
            actors[i] = scope.userId();
            hashes[i] = payloadHash(scope, requestHashes.get(i));
            millis[i] = key.millis();
            index.putIfAbsent(routeIds[i] + "/" + ids[i], i);
        }
        jdbc.query(INSERT_COMPLETED_BATCH, ps -> {
            ps.setLong(1, policy.ttl().toMillis());
            ps.setArray(2, ps.getConnection().createArrayOf("integer", routeIds));
            ps.setArray(3, ps.getConnection().createArrayOf("uuid", ids));
            ps.setArray(4, ps.getConnection().createArrayOf("text", tenants));
            ps.setArray(5, ps.getConnection().createArrayOf("text", actors));
            ps.setArray(6, ps.getConnection().createArrayOf("text", hashes));
            ps.setArray(7, ps.getConnection().createArrayOf("bigint", millis));
        }, rs -> {
            Integer i = index.get(rs.getInt("route_id") + "/" + rs.getObject("event_id"));
            if (i != null) {
                claimed[i] = true;
            }
        });
        return claimed;
    }

    @Override
    public int markAllSucceeded(List<ClaimToken> tokens) {
        if (tokens.isEmpty()) {
            return 0;
        }
        requireOwnTransaction();
        Integer[] routeIds = tokens.stream().map(t -> routes.id(t.scope().route())).toArray(Integer[]::new);
        UUID[] ids = tokens.stream().map(t -> EventKey.of(t.scope()).id()).toArray(UUID[]::new);
        Integer[] days = tokens.stream().map(t -> (int) t.recordId()).toArray(Integer[]::new);
        Integer[] fences = tokens.stream().map(t -> (int) t.fencingToken()).toArray(Integer[]::new);
        return jdbc.update(COMPLETE_BATCH, ps -> {
            ps.setArray(1, ps.getConnection().createArrayOf("integer", routeIds));
            ps.setArray(2, ps.getConnection().createArrayOf("uuid", ids));
            ps.setArray(3, ps.getConnection().createArrayOf("integer", days));
            ps.setArray(4, ps.getConnection().createArrayOf("integer", fences));
        });
    }

    @Override
    public TransitionResult markSucceeded(ClaimToken token) {
        return complete(token, SUCCEEDED, null);
    }

    @Override
    public TransitionResult markFailed(ClaimToken token, String reason) {
        String kept = reason == null ? "" : reason.length() > REASON_LENGTH ? reason.substring(0, REASON_LENGTH) : reason;
        return complete(token, FAILED, kept);
    }

    @Override
    public TransitionResult release(ClaimToken token) {
        return complete(token, RELEASED, null);
    }

    private TransitionResult complete(ClaimToken token, int status, String reason) {
        requireOwnTransaction();
        int routeId = routes.id(token.scope().route());
        UUID id = EventKey.of(token.scope()).id();
        int rows = jdbc.update(COMPLETE, ps -> {
            ps.setInt(1, status);
            ps.setBoolean(2, status == FAILED);
            ps.setString(3, reason);
            ps.setInt(4, routeId);
            ps.setObject(5, id);
            ps.setInt(6, (int) token.recordId());
            ps.setInt(7, (int) token.fencingToken());
            ps.setString(8, token.scope().tenantId());
            ps.setString(9, token.scope().userId());
        });
        return rows == 1 ? TransitionResult.APPLIED : TransitionResult.STALE;
    }

    private void requireOwnTransaction() {
        JdbcIdempotencyStore.requireOwnTransaction(dataSource);
    }
}
