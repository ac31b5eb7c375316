package dev.once.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.ClaimResult;
import dev.once.idempotency.IdempotencyScope;
import dev.once.idempotency.IdempotencyStore;
import dev.once.idempotency.OnceMigrations;
import dev.once.idempotency.RequestFingerprint;
import dev.once.idempotency.Route;
import dev.once.test.PostgresServer;
import dev.once.test.TestDatabase;
import dev.once.test.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;

/**
 * {@code claim} throughput against a raw JDBC {@code INSERT … ON CONFLICT DO NOTHING RETURNING} into the same table,
 * same pool, same concurrency, fresh keys for both, committed synchronously and, as a claim made outside a transaction
 * is, asynchronously. Options: {@code --threads 1,16 --rounds 3 --seconds 5}.
 */
final class ClaimBenchmark {

    static final String RAW_INSERT = """
            INSERT INTO idempotency_record (tenant_id, user_id, route, idempotency_key, request_hash, status,
                                            locked_until, expires_at)
            VALUES (?, ?, ?, ?, ?, 'processing', now() + interval '30 seconds', now() + interval '24 hours')
            ON CONFLICT DO NOTHING
            RETURNING id
            """;

    /** The same raw insert, committed asynchronously as a claim outside a transaction is. */
    static final String RAW_INSERT_ASYNC_COMMIT = """
            WITH durability AS (SELECT set_config('synchronous_commit', 'off', true))
            INSERT INTO idempotency_record (tenant_id, user_id, route, idempotency_key, request_hash, status,
                                            locked_until, expires_at)
            SELECT ?, ?, ?, ?, ?, 'processing', now() + interval '30 seconds', now() + interval '24 hours'
            FROM durability
            ON CONFLICT DO NOTHING
            RETURNING id
            """;

    private ClaimBenchmark() {
    }

    private static Harness.Operation rawInsert(javax.sql.DataSource ds, String sql, Route route, String hash, String keyPrefix) {
        return (t, seq) -> {
            try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setString(1, "acme");
                ps.setString(2, "u" + t);
                ps.setString(3, route.value());
                ps.setString(4, keyPrefix + seq);
                ps.setString(5, hash);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        throw new IllegalStateException("raw insert returned no row");
                    }
                }
            }
        };
    }

    public static void main(String[] args) throws Exception {
        int[] threadCounts = {1, 16};
        int rounds = 3;
        long millis = 5_000;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--threads" -> threadCounts = java.util.Arrays.stream(args[i + 1].split(",")).mapToInt(Integer::parseInt).toArray();
                case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
                case "--seconds" -> millis = Long.parseLong(args[i + 1]) * 1000;
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        PostgresServer server = TestPostgres.server();
        String schema = "bench_claim_" + Long.toHexString(System.nanoTime());
        try (Connection c = java.sql.DriverManager.getConnection(server.jdbcUrl(), server.username(), server.password());
             Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + schema);
        }
        int maxThreads = java.util.Arrays.stream(threadCounts).max().orElse(1);
        try (HikariDataSource ds = TestDatabase.newDataSource(schema, maxThreads + 1, null)) {
            OnceMigrations.migrate(ds);
            IdempotencyStore store = IdempotencyStore.create(ds);
            Route route = Route.http("POST", "/accounts");
            String hash = RequestFingerprint.of("POST", route, "application/json", "{\"name\":\"Ada\"}".getBytes(StandardCharsets.UTF_8));
            ClaimPolicy policy = ClaimPolicy.ofDefaults();
            String run = Long.toHexString(System.nanoTime());

            Harness.Operation claim = (t, seq) -> {
                ClaimResult result = store.claim(IdempotencyScope.of("acme", "u" + t, route, "c-" + run + "-" + seq), hash, policy);
                if (!(result instanceof ClaimResult.Claimed)) {
                    throw new IllegalStateException("expected a fresh claim, got " + result);
                }
            };
            Harness.Operation raw = rawInsert(ds, RAW_INSERT, route, hash, "r-" + run + "-");
            Harness.Operation rawAsync = rawInsert(ds, RAW_INSERT_ASYNC_COMMIT, route, hash, "a-" + run + "-");

            System.out.printf(Locale.ROOT, "claim benchmark on %s (%d rounds x %d s, alternating)%n", server, rounds, millis / 1000);
            System.out.printf(Locale.ROOT, "%-8s %14s %14s %14s %10s %10s%n", "threads", "raw insert/s", "raw async/s",
                    "claim/s", "vs raw", "vs async");
            for (int threads : threadCounts) {
                java.util.Map<String, Double> r = Harness.compare(
                        java.util.Map.of("raw", raw, "raw async", rawAsync, "claim", claim),
                        List.of("raw", "raw async", "claim"), threads, millis, rounds);
                System.out.printf(Locale.ROOT, "%-8d %14.0f %14.0f %14.0f %9.2fx %9.2fx%n", threads, r.get("raw"),
                        r.get("raw async"), r.get("claim"), r.get("claim") / r.get("raw"), r.get("claim") / r.get("raw async"));
            }
        } finally {
            try (Connection c = java.sql.DriverManager.getConnection(server.jdbcUrl(), server.username(), server.password());
                 Statement s = c.createStatement()) {
                s.execute("DROP SCHEMA " + schema + " CASCADE");
            }
        }
    }
}
