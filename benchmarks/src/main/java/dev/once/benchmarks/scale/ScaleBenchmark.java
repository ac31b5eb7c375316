package dev.once.benchmarks.scale;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.benchmarks.Harness;
import dev.once.idempotency.OnceMigrations;
import dev.once.outbox.UuidV7;
import dev.once.test.PostgresServer;
import dev.once.test.TestDatabase;
import dev.once.test.TestPostgres;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Storage shaped for handler claims (issue [4/6]), measured before it is built, as the floor of the design: today's
 * claim row in {@code idempotency_record} against a narrow claim row, range-partitioned by day on its UUIDv7 event id
 * (whose first 48 bits are its time, so the partition key is the id and the unique key (route, event id) includes it),
 * both prefilled with {@code --rows} claims spread over {@code --days} days. Reports, from the same run:
 * <ul>
 *   <li>bytes per claim row, indexes included ({@code pg_total_relation_size} over the rows);</li>
 *   <li>fresh claims/s at each of {@code --threads}, one {@code INSERT … ON CONFLICT DO NOTHING RETURNING} each, as a
 *       TRANSACTIONAL handler's one-write claim, alternating rounds;</li>
 *   <li>retention's cost per claim: today's {@code DELETE} of the oldest day's claims against detaching and dropping
 *       the oldest day's partition.</li>
 * </ul>
 * Options: {@code --rows 1000000 --days 7 --threads 1,16 --seconds 5 --rounds 3}. Not part of CI. It leaves
 * nothing behind: the schema is dropped at the end.
 */
public final class ScaleBenchmark {

    /** A handler claim's route as the dispatcher writes it: {@code <event_type>:v<version>:<handler_key>}. */
    private static final String ROUTE = "AccountCreated:v1:welcome-mail";

    private static final String NARROW = """
            CREATE TABLE claim_narrow (
                route_id      integer NOT NULL,
                event_id      uuid NOT NULL,
                tenant_id     text COLLATE "C" NOT NULL,
                actor_id      text COLLATE "C",
                status        smallint NOT NULL,
                fencing_token integer NOT NULL DEFAULT 1,
                locked_until  timestamptz,
                payload_hash  bytea NOT NULL,
                CONSTRAINT claim_narrow_pk PRIMARY KEY (route_id, event_id)
            ) PARTITION BY RANGE (event_id)
            """;

    /** Today's one-write claim (BatchClaims.INSERT_COMPLETED_BATCH, one row). */
    private static final String CLAIM_TODAY = """
            INSERT INTO idempotency_record (tenant_id, user_id, route, idempotency_key, request_hash, status,
                                            response_code, expires_at)
            VALUES ('acme', 'svc-orders', ?, ?, ?, 'succeeded', 200, statement_timestamp() + interval '7 days')
            ON CONFLICT ON CONSTRAINT idempotency_record_scope_uk DO NOTHING
            RETURNING id
            """;

    private static final String CLAIM_NARROW = """
            INSERT INTO claim_narrow (route_id, event_id, tenant_id, actor_id, status, payload_hash)
            VALUES (1, ?, 'acme', 'svc-orders', 1, ?)
            ON CONFLICT ON CONSTRAINT claim_narrow_pk DO NOTHING
            RETURNING event_id
            """;

    private ScaleBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        long rows = 1_000_000;
        int days = 7;
        List<Integer> threads = List.of(1, 16);
        long millis = 5_000;
        int rounds = 3;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--rows" -> rows = Long.parseLong(args[i + 1]);
                case "--days" -> days = Integer.parseInt(args[i + 1]);
                case "--threads" -> threads = java.util.Arrays.stream(args[i + 1].split(",")).map(Integer::parseInt).toList();
                case "--seconds" -> millis = Long.parseLong(args[i + 1]) * 1000;
                case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        PostgresServer server = TestPostgres.server();
        String schema = "bench_scale_" + Long.toHexString(System.nanoTime());
        execute(server, "CREATE SCHEMA " + schema);
        int maxThreads = threads.stream().mapToInt(Integer::intValue).max().orElse(1);
        try (HikariDataSource ds = TestDatabase.newDataSource(schema, maxThreads + 2, null)) {
            System.out.printf(Locale.ROOT, "scale benchmark on %s: %,d claim rows over %d days in each table%n",
                    server, rows, days);
            run(ds, rows, days, threads, millis, rounds);
        } finally {
            execute(server, "DROP SCHEMA " + schema + " CASCADE");
        }
    }

    private static void run(HikariDataSource ds, long rows, int days, List<Integer> threads, long millis, int rounds)
            throws Exception {
        JdbcTemplate jdbc = new JdbcTemplate(ds);
        OnceMigrations.migrate(ds);
        jdbc.execute(NARROW);
        LocalDate today = LocalDate.now(ZoneOffset.UTC);
        LocalDate first = today.minusDays(days);
        for (LocalDate day = first; !day.isAfter(today.plusDays(2)); day = day.plusDays(1)) {
            jdbc.execute("CREATE TABLE " + partition(day) + " PARTITION OF claim_narrow FOR VALUES FROM ('"
                    + bound(day) + "') TO ('" + bound(day.plusDays(1)) + "')");
        }

        long start = first.atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
        long span = days * 86_400_000L;
        long t0 = System.nanoTime();
        prefill(jdbc, rows, start, span);
        System.out.printf(Locale.ROOT, "prefilled both tables in %.0f s%n", (System.nanoTime() - t0) / 1e9);
        jdbc.execute("VACUUM ANALYZE idempotency_record");
        jdbc.execute("VACUUM ANALYZE claim_narrow");

        long todayBytes = jdbc.queryForObject("SELECT pg_total_relation_size('idempotency_record')", Long.class);
        long narrowBytes = jdbc.queryForObject("SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree('claim_narrow')",
                Long.class);
        System.out.println();
        System.out.println("bytes per claim row, indexes included");
        System.out.printf(Locale.ROOT, "  %-44s %10.0f%n", "idempotency_record (today)", (double) todayBytes / rows);
        System.out.printf(Locale.ROOT, "  %-44s %10.0f%n", "claim_narrow, partitioned by event id", (double) narrowBytes / rows);

        for (int n : threads) {
            Map<String, Harness.Operation> operations = new LinkedHashMap<>();
            String run = Long.toHexString(System.nanoTime());
            operations.put("claim into idempotency_record", (t, seq) -> jdbc.queryForList(CLAIM_TODAY, ROUTE,
                    UuidV7.next().toString(), "v1:" + run + seq));
            operations.put("claim into claim_narrow", (t, seq) -> jdbc.queryForList(CLAIM_NARROW, UuidV7.next(),
                    hash(seq)));
            Map<String, Double> result = Harness.compare(operations, new ArrayList<>(operations.keySet()), n, millis,
                    rounds);
            print("fresh claims/s, " + n + " thread" + (n == 1 ? "" : "s"), result, "claim into idempotency_record");
        }

        // retention of the oldest day: today's row-by-row delete, against a partition detached and dropped. There is no
        // DEFAULT partition: PostgreSQL refuses DETACH … CONCURRENTLY while one exists, and without CONCURRENTLY the
        // detach locks the whole table against every claim.
        Instant dayEnd = first.plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant();
        long deleteStart = System.nanoTime();
        int deleted = jdbc.update("DELETE FROM idempotency_record WHERE claimed_at < ?", java.sql.Timestamp.from(dayEnd));
        double deleteSeconds = (System.nanoTime() - deleteStart) / 1e9;
        long dayRows = jdbc.queryForObject("SELECT count(*) FROM " + partition(first), Long.class);
        long dropStart = System.nanoTime();
        jdbc.execute("ALTER TABLE claim_narrow DETACH PARTITION " + partition(first) + " CONCURRENTLY");
        jdbc.execute("DROP TABLE " + partition(first));
        double dropSeconds = (System.nanoTime() - dropStart) / 1e9;
        System.out.println();
        System.out.println("retention of the oldest day's claims");
        System.out.printf(Locale.ROOT, "  %-44s %,10d rows in %7.2f s: %,12.0f rows/s, %8.2f us per claim%n",
                "DELETE from idempotency_record (today)", deleted, deleteSeconds, deleted / deleteSeconds,
                deleteSeconds * 1e6 / Math.max(1, deleted));
        System.out.printf(Locale.ROOT, "  %-44s %,10d rows in %7.2f s: %,12.0f rows/s, %8.2f us per claim%n",
                "DETACH CONCURRENTLY + DROP of its partition", dayRows, dropSeconds, dayRows / dropSeconds,
                dropSeconds * 1e6 / Math.max(1, dayRows));
    }

    /** Both tables get the same claims: event ids spread evenly over the days, in batches of a million. */
    private static void prefill(JdbcTemplate jdbc, long rows, long startMillis, long spanMillis) {
        long batch = 1_000_000;
        for (long from = 0; from < rows; from += batch) {
            long to = Math.min(rows, from + batch);
            String ids = """
                    SELECT i, CAST(lpad(to_hex(%d + i * %d / %d), 12, '0') || '7' || substr(md5(i::text), 1, 3)
                                   || '8' || substr(md5(i::text), 4, 15) AS uuid) AS event_id,
                           to_timestamp((%d + i * %d / %d) / 1000.0) AS at
                    FROM generate_series(CAST(%d AS bigint), %d) AS i
                    """.formatted(startMillis, spanMillis, rows, startMillis, spanMillis, rows, from, to - 1);
            jdbc.execute("""
                    INSERT INTO idempotency_record (tenant_id, user_id, route, idempotency_key, request_hash, status,
                                                    response_code, expires_at, claimed_at, created_at, updated_at)
                    SELECT 'acme', 'svc-orders', '%s', event_id::text, 'v1:' || md5(i::text) || md5(event_id::text),
                           'succeeded', 200, at + interval '7 days', at, at, at
                    FROM (%s) AS ids
                    """.formatted(ROUTE, ids));
            jdbc.execute("""
                    INSERT INTO claim_narrow (route_id, event_id, tenant_id, actor_id, status, payload_hash)
                    SELECT 1, event_id, 'acme', 'svc-orders', 1, decode(md5(i::text) || md5(event_id::text), 'hex')
                    FROM (%s) AS ids
                    """.formatted(ids));
        }
    }

    /** The smallest UUIDv7 of {@code day}: its first 48 bits are the day's first millisecond. */
    static String bound(LocalDate day) {
        long ms = day.atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli();
        return String.format(Locale.ROOT, "%08x-%04x-0000-0000-000000000000", ms >>> 16, ms & 0xffff);
    }

    private static String partition(LocalDate day) {
        return "claim_narrow_d" + day.toString().replace("-", "");
    }

    private static byte[] hash(long seq) {
        byte[] hash = new byte[32];
        java.nio.ByteBuffer.wrap(hash).putLong(seq).putLong(System.nanoTime());
        return hash;
    }

    private static void print(String title, Map<String, Double> result, String baseline) {
        System.out.println();
        System.out.println(title);
        double base = result.get(baseline);
        result.forEach((name, ops) -> System.out.printf(Locale.ROOT, "  %-44s %10.0f %7.2fx%n", name, ops, ops / base));
    }

    private static void execute(PostgresServer server, String sql) throws Exception {
        try (Connection c = DriverManager.getConnection(server.jdbcUrl(), server.username(), server.password());
             Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
