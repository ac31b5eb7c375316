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
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code claim} throughput against a raw JDBC {@code INSERT … ON CONFLICT DO NOTHING RETURNING} into the same table,
 * same pool, same concurrency, fresh keys for both. Options: {@code --threads 1,16 --rounds 3 --seconds 5}.
 */
final class ClaimBenchmark {

    static final String RAW_INSERT = """
            INSERT INTO idempotency_record (tenant_id, user_id, route, idempotency_key, request_hash, status,
                                            locked_until, expires_at)
            VALUES (?, ?, ?, ?, ?, 'processing', now() + interval '30 seconds', now() + interval '24 hours')
            ON CONFLICT DO NOTHING
            RETURNING id
            """;

    private ClaimBenchmark() {
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
            Harness.Operation raw = (t, seq) -> {
                try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(RAW_INSERT)) {
                    ps.setString(1, "acme");
                    ps.setString(2, "u" + t);
                    ps.setString(3, route.value());
                    ps.setString(4, "r-" + run + "-" + seq);
                    ps.setString(5, hash);
                    try (ResultSet rs = ps.executeQuery()) {
                        if (!rs.next()) {
                            throw new IllegalStateException("raw insert returned no row");
                        }
                    }
                }
            };

            System.out.printf(Locale.ROOT, "claim benchmark on %s (%d rounds x %d s, alternating)%n", server, rounds, millis / 1000);
            System.out.printf(Locale.ROOT, "%-8s %16s %16s %8s%n", "threads", "raw insert/s", "claim/s", "ratio");
            for (int threads : threadCounts) {
                Harness.measure(raw, threads, 1_000); // warm-up: JIT, pool, prepared statements
                Harness.measure(claim, threads, 1_000);
                List<Double> rawRuns = new ArrayList<>();
                List<Double> claimRuns = new ArrayList<>();
                for (int r = 0; r < rounds; r++) {
                    rawRuns.add(Harness.measure(raw, threads, millis));
                    claimRuns.add(Harness.measure(claim, threads, millis));
                }
                double rawOps = Harness.median(rawRuns);
                double claimOps = Harness.median(claimRuns);
                System.out.printf(Locale.ROOT, "%-8d %16.0f %16.0f %7.2fx%n", threads, rawOps, claimOps, claimOps / rawOps);
            }
        } finally {
            try (Connection c = java.sql.DriverManager.getConnection(server.jdbcUrl(), server.username(), server.password());
                 Statement s = c.createStatement()) {
                s.execute("DROP SCHEMA " + schema + " CASCADE");
            }
        }
    }
}
