package dev.once.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.idempotency.ClaimPartitions;
import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.ClaimResult;
import dev.once.idempotency.HandlerClaimStore;
import dev.once.idempotency.IdempotencyOperations;
import dev.once.idempotency.IdempotencyScope;
import dev.once.idempotency.IdempotencyStore;
import dev.once.idempotency.OnceMigrations;
import dev.once.idempotency.Route;
import dev.once.idempotency.StoredResponse;
import dev.once.outbox.UuidV7;
import dev.once.test.TestDatabase;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/** The core command against a real PostgreSQL seeded through the store's own API. */
class CoreIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    static final Route ROUTE = Route.http("POST", "/accounts");
    static final List<String> DIAGNOSIS_FIELDS = List.of("diagnosis", "tenant_id", "user_id", "route", "idempotency_key",
            "status", "request_hash", "request_hash_matches", "attempts", "response_code", "response_content_type",
            "response_headers", "response_body", "response_body_encoding", "response_body_omitted", "task_id",
            "outbox_event_id", "locked_until", "expires_at", "created_at", "updated_at", "checked_at");

    static IdempotencyStore store;
    static HandlerClaimStore handlerClaims;

    @BeforeAll
    static void seed() {
        OnceMigrations.migrate(db.dataSource());
        store = IdempotencyStore.create(db.dataSource());
        handlerClaims = HandlerClaimStore.create(db.dataSource());
    }

    static CoreRun core(String... args) {
        return CoreRun.of(CoreRun.connectedTo(db, args));
    }

    static CoreRun raw(String... args) {
        return CoreRun.of(args);
    }

    static String[] scope(String key) {
        return new String[] {"--tenant-id", "acme", "--user-id", "alice", "--route", "POST /accounts", "--idempotency-key", key};
    }

    static String[] idem(String command, String[] scope, String... extra) {
        return concat(concat(new String[] {"idempotency", command}, scope), extra);
    }

    static String[] concat(String[] a, String... b) {
        List<String> all = new ArrayList<>(List.of(a));
        all.addAll(List.of(b));
        return all.toArray(String[]::new);
    }

    static ClaimResult.Claimed claim(String key, ClaimPolicy policy) {
        return (ClaimResult.Claimed) store.claim(IdempotencyScope.of("acme", "alice", ROUTE, key), "v1:abc", policy);
    }

    @Test
    void diagnose_json_has_the_documented_shape_in_each_of_the_seven_states() {
        String replayable = "k-" + UUID.randomUUID();
        store.markSucceeded(claim(replayable, ClaimPolicy.ofDefaults()).token(),
                StoredResponse.of(201, "application/json", "{\"id\":1}"), "task-1", null);
        String failed = "k-" + UUID.randomUUID();
        store.markFailed(claim(failed, ClaimPolicy.ofDefaults()).token(), StoredResponse.of(500, "text/plain", "boom"));
        String live = "k-" + UUID.randomUUID();
        claim(live, ClaimPolicy.ofDefaults());
        String lapsed = "k-" + UUID.randomUUID();
        claim(lapsed, ClaimPolicy.custom().lease(Duration.ofMillis(50)).build());
        String expired = "k-" + UUID.randomUUID();
        store.release(claim(expired, ClaimPolicy.ofDefaults()).token());

        Map<String, String> expectations = Map.of(
                "k-" + UUID.randomUUID(), "missing",
                replayable, "replayable",
                failed, "failed_requires_explicit_retry",
                live, "in_progress",
                expired, "expired_reusable");
        expectations.forEach((key, state) -> assertDiagnosis(core(idem("diagnose", scope(key), "--json")), state));
        assertDiagnosis(core(idem("diagnose", scope(replayable), "--request-hash", "v1:other", "--json")),
                "request_hash_conflict");
        await().atMost(Duration.ofSeconds(10)).until(() ->
                "lease_expired".equals(core(idem("diagnose", scope(lapsed), "--json")).json().get("diagnosis")));

        CoreRun run = core(idem("diagnose", scope(replayable), "--json"));
        assertThat(run.json()).containsEntry("response_code", 201).containsEntry("response_body", "{\"id\":1}")
                .containsEntry("task_id", "task-1").containsEntry("outbox_event_id", null);
    }

    private static void assertDiagnosis(CoreRun run, String state) {
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.json().keySet()).containsExactlyElementsOf(DIAGNOSIS_FIELDS);
        assertThat(run.json()).containsEntry("diagnosis", state);
    }

    @Test
    void diagnose_json_for_a_missing_key_matches_its_golden_file() throws IOException {
        CoreRun run = core(idem("diagnose", scope("golden-key"), "--json"));

        String normalised = run.out().trim().replaceAll("\"checked_at\":\"[^\"]+\"", "\"checked_at\":\"<instant>\"");
        String golden;
        try (var in = CoreIT.class.getResourceAsStream("/golden/diagnose-missing.json")) {
            golden = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
        }
        assertThat(normalised).isEqualTo(golden);
    }

    @Test
    void outbox_status_json_matches_its_golden_file() throws IOException {
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        jdbc.update("DELETE FROM outbox_event");
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version,
                                          payload, parked_at, park_reason)
                VALUES ('00000000-0000-7000-8000-000000000001', 'acme', 'alice', 'account', 'a-1', 'AccountCreated', 1, '{}',
                        now(), 'RecordTooLargeException: too large')
                """);

        CoreRun run = raw(concat(new String[] {"outbox", "status", "--json"}, connectionArgs()));

        assertThat(run.out().trim().replaceAll("\"parked_at\":\"[^\"]+\"", "\"parked_at\":\"<instant>\""))
                .isEqualTo(golden("/golden/outbox-status.json"));
    }

    @Test
    void an_empty_stuck_list_in_json_matches_its_golden_file() throws IOException {
        CoreRun run = raw(concat(new String[] {"idempotency", "stuck", "--tenant-id", "nobody-" + UUID.randomUUID(), "--json"},
                connectionArgs()));

        assertThat(run.out().trim()).isEqualTo(golden("/golden/stuck-empty.json"));
    }

    private static String golden(String resource) throws IOException {
        try (var in = CoreIT.class.getResourceAsStream(resource)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
        }
    }

    @Test
    void diagnose_prints_aligned_fields_for_people() {
        CoreRun run = core(idem("diagnose", scope("k-" + UUID.randomUUID())));

        assertThat(run.exit()).isZero();
        assertThat(run.out()).containsPattern("(?m)^diagnosis +missing$").containsPattern("(?m)^tenant_id +acme$");
    }

    @Test
    void expire_without_yes_only_counts_and_with_yes_expires() {
        String key = "k-" + UUID.randomUUID();
        store.markSucceeded(claim(key, ClaimPolicy.custom().lease(Duration.ofMillis(10)).ttl(Duration.ofMillis(50)).build())
                .token(), StoredResponse.of(200, null, new byte[0]));
        await().atMost(Duration.ofSeconds(10)).until(() -> IdempotencyOperations.create(db.dataSource()).countExpirable() >= 1);

        CoreRun dryRun = raw(concat(new String[] {"idempotency", "expire", "--json"}, connectionArgs()));
        assertThat(dryRun.exit()).isZero();
        assertThat(dryRun.json()).containsEntry("dry_run", true);
        assertThat(((Number) dryRun.json().get("would_expire")).longValue()).isGreaterThanOrEqualTo(1);
        assertThat(status(key)).isEqualTo("succeeded");

        CoreRun run = raw(concat(new String[] {"idempotency", "expire", "--yes", "--batch-size", "1", "--json"}, connectionArgs()));
        assertThat(run.exit()).isZero();
        assertThat(run.json()).containsEntry("dry_run", false);
        assertThat(run.err()).contains("expired 1");
        assertThat(status(key)).isEqualTo("expired");
    }

    @Test
    void stuck_lists_lapsed_leases_and_fails_on_findings_when_asked() {
        String key = "stuck-" + UUID.randomUUID();
        claim(key, ClaimPolicy.custom().lease(Duration.ofMillis(20)).build());
        await().atMost(Duration.ofSeconds(10)).until(() -> !IdempotencyOperations.create(db.dataSource()).findStuck(Duration.ofHours(1)).isEmpty());

        CoreRun human = raw(concat(new String[] {"idempotency", "stuck"}, connectionArgs()));
        CoreRun json = raw(concat(new String[] {"idempotency", "stuck", "--json", "--fail-on-findings"}, connectionArgs()));

        assertThat(human.exit()).isZero();
        assertThat(human.out()).contains("ROUTE").contains(key).contains("lapsed");
        assertThat(json.exit()).isEqualTo(Core.FINDINGS);
        assertThat(json.out()).contains("\"idempotency_key\":\"" + key + "\"").contains("\"lease_lapsed\":true");
    }

    @Test
    void release_requires_yes_refuses_a_live_lease_without_force_and_is_logged() {
        String key = "k-" + UUID.randomUUID();
        claim(key, ClaimPolicy.ofDefaults());

        CoreRun noYes = core(idem("release", scope(key)));
        CoreRun live = core(idem("release", scope(key), "--yes"));
        CoreRun forced = core(idem("release", scope(key), "--yes", "--force"));

        assertThat(noYes.exit()).isEqualTo(Core.USAGE);
        assertThat(noYes.err()).contains("--yes");
        assertThat(live.exit()).isEqualTo(Core.FINDINGS);
        assertThat(live.out()).contains("lease is live");
        assertThat(forced.exit()).isZero();
        assertThat(status(key)).isEqualTo("expired");
    }

    @Test
    void purge_requires_yes() {
        CoreRun run = raw(concat(new String[] {"idempotency", "purge", "--older-than", "7d"}, connectionArgs()));

        assertThat(run.exit()).isEqualTo(Core.USAGE);
        assertThat(run.err()).contains("--yes");
        assertThat(raw(concat(new String[] {"idempotency", "purge", "--older-than", "7d", "--yes", "--json"}, connectionArgs()))
                .exit()).isZero();
    }

    @Test
    void bad_arguments_are_usage_errors_that_name_the_flag() {
        CoreRun badDuration = raw(concat(new String[] {"idempotency", "stuck", "--older-than", "soon"}, connectionArgs()));
        CoreRun badKey = core(idem("diagnose", scope("has space")));
        CoreRun missing = raw("idempotency", "diagnose", "--tenant-id", "acme");

        assertThat(badDuration.exit()).isEqualTo(Core.USAGE);
        assertThat(badDuration.err()).contains("--older-than").contains("not a duration");
        assertThat(badKey.exit()).isEqualTo(Core.USAGE);
        assertThat(badKey.err()).contains("space");
        assertThat(missing.exit()).isEqualTo(Core.USAGE);
        assertThat(missing.err()).contains("--user-id");
    }

    @Test
    void an_unreachable_database_is_exit_code_3_and_the_password_is_never_printed() {
        CoreRun run = raw("idempotency", "stuck", "--jdbc-url", "jdbc:postgresql://127.0.0.1:1/nowhere", "--db-user", "ops",
                "--db-password", "s3cret-pw");

        assertThat(run.exit()).isEqualTo(Core.UNREACHABLE);
        assertThat(run.err()).contains("cannot reach the database").doesNotContain("s3cret-pw");
    }

    @Test
    void outbox_status_shows_pending_and_parked_events_with_their_reasons() {
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        jdbc.update("DELETE FROM outbox_event");
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version,
                                          payload, parked_at, park_reason)
                VALUES (gen_random_uuid(), 'acme', 'alice', 'account', 'a-1', 'AccountCreated', 1, '{}', now(), 'RecordTooLargeException: 2 MB'),
                       (gen_random_uuid(), 'acme', 'alice', 'account', 'a-2', 'AccountCreated', 1, '{}', NULL, NULL)
                """);

        CoreRun run = raw(concat(new String[] {"outbox", "status", "--json", "--fail-on-findings"}, connectionArgs()));
        CoreRun human = raw(concat(new String[] {"outbox", "status"}, connectionArgs()));

        assertThat(run.exit()).isEqualTo(Core.FINDINGS);
        assertThat(run.json()).containsEntry("pending", 1).containsEntry("parked", 1).containsEntry("relay_mode", "polling");
        assertThat(run.out()).contains("RecordTooLargeException: 2 MB");
        assertThat(human.out()).contains("pending").contains("a-1").contains("REASON");
    }

    /** The slot is the one the watermarks were taken for; one that has gone is a finding that says why. */
    @Test
    void outbox_status_finds_the_slot_by_its_watermarks_and_a_missing_slot_is_a_finding() {
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        jdbc.update("DELETE FROM outbox_event");
        jdbc.update("""
                INSERT INTO once_relay_watermark (slot_name, snapshot, lsn, seq_bound, server_started, walsender_pid)
                VALUES ('gone_slot', pg_current_snapshot(), pg_current_wal_insert_lsn(), 0, pg_postmaster_start_time(), 0)
                """);
        try {
            CoreRun run = raw(concat(new String[] {"outbox", "status", "--json", "--fail-on-findings"}, connectionArgs()));
            CoreRun human = raw(concat(new String[] {"outbox", "status"}, connectionArgs()));

            assertThat(run.exit()).isEqualTo(Core.FINDINGS);
            assertThat(run.json()).containsEntry("relay_mode", "cdc").containsEntry("pending", 0);
            assertThat(run.json().get("slot")).asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
                    .containsEntry("name", "gone_slot").containsEntry("state", "MISSING")
                    .containsEntry("active", false).hasEntrySatisfying("problem", problem ->
                            assertThat(problem.toString()).contains("replication slot gone_slot does not exist"));
            assertThat(human.out()).contains("gone_slot MISSING").contains("slot_problem");
        } finally {
            jdbc.update("DELETE FROM once_relay_watermark");
        }
    }

    /** What the slot has not confirmed is what is pending: its lag in bytes and in time, and why nothing moves. */
    @Test
    void outbox_status_shows_the_slots_lag_in_bytes_and_time_and_a_slot_nothing_streams_is_a_finding() {
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        jdbc.update("DELETE FROM outbox_event");
        jdbc.queryForList("SELECT pg_create_logical_replication_slot('idle_slot', 'test_decoding')");
        try {
            jdbc.update("""
                    INSERT INTO once_relay_watermark (slot_name, snapshot, lsn, seq_bound, server_started, walsender_pid,
                                                      taken_at)
                    VALUES ('idle_slot', pg_current_snapshot(), pg_current_wal_insert_lsn(), 0, pg_postmaster_start_time(),
                            0, now() - interval '10 minutes')
                    """);
            jdbc.update("""
                    INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version, payload)
                    VALUES (gen_random_uuid(), 'acme', 'alice', 'account', 'a-1', 'AccountCreated', 1, '{}')
                    """);

            CoreRun run = raw(concat(new String[] {"outbox", "status", "--json", "--fail-on-findings"}, connectionArgs()));
            CoreRun human = raw(concat(new String[] {"outbox", "status"}, connectionArgs()));

            assertThat(run.exit()).isEqualTo(Core.FINDINGS);
            assertThat(run.json()).containsEntry("relay_mode", "cdc").containsEntry("pending", 1);
            assertThat(run.json().get("slot")).asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
                    .containsEntry("name", "idle_slot").containsEntry("state", "INACTIVE").containsEntry("active", false)
                    .containsEntry("wal_status", "reserved")
                    .hasEntrySatisfying("lag_bytes", bytes -> assertThat(((Number) bytes).longValue()).isPositive())
                    .hasEntrySatisfying("lag_seconds", seconds -> assertThat(((Number) seconds).longValue())
                            .as("since the oldest watermark it has not confirmed").isGreaterThanOrEqualTo(540))
                    .hasEntrySatisfying("problem", problem ->
                            assertThat(problem.toString()).contains("no relay streams replication slot idle_slot"));
            assertThat(human.out()).containsPattern("idle_slot INACTIVE, lag [0-9]+ bytes, ").contains("slot_problem");
        } finally {
            jdbc.update("DELETE FROM once_relay_watermark");
            jdbc.update("DELETE FROM outbox_event");
            jdbc.queryForList("SELECT pg_drop_replication_slot('idle_slot')");
        }
    }

    @Test
    void redrive_requeues_a_parked_event_with_the_events_behind_it_in_order() {
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        jdbc.update("DELETE FROM outbox_event");
        UUID parked = UUID.randomUUID();
        UUID behind = UUID.randomUUID();
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version,
                                          payload, parked_at, park_reason)
                VALUES (?, 'acme', 'alice', 'account', 'a-9', 'AccountCreated', 1, '{}', now(), 'too large')
                """, parked);
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version, payload)
                VALUES (?, 'acme', 'alice', 'account', 'a-9', 'AccountUpdated', 1, '{}')
                """, behind);

        CoreRun refused = raw(concat(new String[] {"outbox", "redrive", "--event-id", parked.toString()}, connectionArgs()));
        CoreRun run = raw(concat(new String[] {"outbox", "redrive", "--event-id", parked.toString(), "--yes", "--json"}, connectionArgs()));

        assertThat(refused.exit()).isEqualTo(Core.USAGE);
        assertThat(run.exit()).as(run.err()).isZero();
        assertThat(run.json()).containsEntry("requeued", 2);
        assertThat(jdbc.queryForList("SELECT id FROM outbox_event WHERE aggregate_id = 'a-9' AND parked_at IS NULL ORDER BY seq",
                UUID.class)).containsExactly(parked, behind);
        assertThat(raw(concat(new String[] {"outbox", "redrive", "--event-id", parked.toString(), "--yes"}, connectionArgs()))
                .exit()).as("no longer parked").isEqualTo(Core.FINDINGS);
    }

    @Test
    void failed_handlers_are_listed_and_a_retry_lets_the_next_delivery_run_them() {
        String eventId = UUID.randomUUID().toString();
        ClaimResult.Claimed claimed = (ClaimResult.Claimed) handlerClaims.claim(IdempotencyScope.of("acme", "alice",
                Route.of("OrderPlaced:v1:projection"), eventId), "v1:payload", ClaimPolicy.ofDefaults());
        handlerClaims.markFailed(claimed.token(), "projection is down");

        CoreRun failed = raw(concat(new String[] {"dispatch", "failed", "--handler-key", "projection", "--json", "--fail-on-findings"},
                connectionArgs()));
        CoreRun retry = raw(concat(new String[] {"dispatch", "retry", "--event-id", eventId, "--handler-key", "projection", "--yes"},
                connectionArgs()));

        assertThat(failed.exit()).isEqualTo(Core.FINDINGS);
        assertThat(failed.out()).contains("\"event_id\":\"" + eventId + "\"").contains("\"handler_key\":\"projection\"")
                .contains("projection is down");
        assertThat(retry.exit()).as(retry.err()).isZero();
        assertThat(handlerStatus(eventId)).as("released").isEqualTo(RELEASED);
        assertThat(handlerClaims.claim(IdempotencyScope.of("acme", "alice", Route.of("OrderPlaced:v1:projection"), eventId),
                "v1:payload", ClaimPolicy.ofDefaults())).isInstanceOf(ClaimResult.Claimed.class);
    }

    @Test
    void parked_events_are_listed_and_retried_or_abandoned_in_bulk_after_a_dry_run() throws IOException {
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        String group = "cli-" + UUID.randomUUID().toString().substring(0, 8);
        jdbc.update("""
                INSERT INTO once_parked_event (group_id, topic, kafka_partition, kafka_offset, record_key,
                    record_timestamp, header_names, header_values, payload, event_id, event_type, event_version,
                    tenant_id, status, reason, handler_keys, attempts, first_failed_at, last_failed_at,
                    exception_class, message, fingerprint, next_attempt_at, retry_until)
                VALUES (?, 'once.order', 0, 41, 'o-1', 0, '{}', '{}', '{}', '00000000-0000-7000-8000-000000000041',
                        'OrderPlaced', 1, 'acme', 'failed', 'failing', '{mailer}', 7, now(), now(),
                        'java.lang.IllegalStateException', 'mail service unavailable (503)', '0123456789abcdef', now(), now()),
                       (?, 'once.order', 0, 42, 'o-1', 0, '{}', '{}', '{}', '00000000-0000-7000-8000-000000000042',
                        'OrderPlaced', 1, 'acme', 'parked', 'behind', '{}', 0, NULL, NULL, NULL, NULL, NULL,
                        'infinity', NULL)
                """, group, group);
        String[] mine = {"--group", group};
        CoreRun list = raw(concat(concat(new String[] {"dispatch", "parked", "list", "--json", "--fail-on-findings"}, mine),
                connectionArgs()));
        CoreRun dryRetry = raw(concat(concat(new String[] {"dispatch", "parked", "retry", "--handler-key", "mailer", "--json"},
                mine), connectionArgs()));
        CoreRun otherTenant = raw(concat(concat(new String[] {"dispatch", "parked", "abandon", "--tenant-id", "globex",
                "--json"}, mine), connectionArgs()));
        CoreRun retry = raw(concat(concat(new String[] {"dispatch", "parked", "retry", "--failure", "0123456789abcdef",
                "--yes", "--json", "--reason", "mail service back"}, mine), connectionArgs()));
        CoreRun abandon = raw(concat(concat(new String[] {"dispatch", "parked", "abandon", "--event-type", "OrderPlaced",
                "--older-than", "0s", "--yes"}, mine), connectionArgs()));
        CoreRun badAge = raw(concat(concat(new String[] {"dispatch", "parked", "retry", "--older-than", "soon"}, mine),
                connectionArgs()));

        assertThat(list.exit()).isEqualTo(Core.FINDINGS);
        assertThat(list.out().trim().replace(group, "<group>")
                .replaceAll("\"(first_failed_at|last_failed_at|next_attempt_at|parked_at)\":\"[^\"]+\"", "\"$1\":\"<instant>\""))
                .isEqualTo(golden("/golden/dispatch-parked-list.json"));
        assertThat(dryRetry.out().trim()).isEqualTo("{\"dry_run\":true,\"would_retry\":1}");
        assertThat(otherTenant.out().trim()).isEqualTo("{\"dry_run\":true,\"would_abandon\":0}");
        assertThat(retry.out().trim()).isEqualTo("{\"dry_run\":false,\"retried\":1}");
        assertThat(abandon.exit()).as(abandon.err()).isZero();
        assertThat(abandon.out()).contains("abandoned 2 parked event(s)");
        assertThat(jdbc.queryForList("SELECT status FROM once_parked_event WHERE group_id = ?", String.class, group))
                .containsOnly("abandoned").hasSize(2);
        assertThat(badAge.exit()).isEqualTo(Core.USAGE);
        CoreRun audit = raw(concat(new String[] {"audit", "--limit", "2", "--json"}, connectionArgs()));
        assertThat(audit.exit()).as(audit.err()).isZero();
        String user = System.getProperty("user.name");
        assertThat(audit.out().trim().replaceAll("\"(id|at)\":(\"[^\"]+\"|\\d+)", "\"$1\":\"<$1>\"")
                .replace(group, "<group>").replace("\"operator\":\"" + user + "\"", "\"operator\":\"<user>\""))
                .as("one entry per action taken, none for a dry run, newest first")
                .isEqualTo(golden("/golden/audit.json"));
    }

    @Test
    void handler_claims_outlive_expire_and_purge_until_their_own_retention_and_dispatch_claims_shows_it() {
        Route handler = Route.of("OrderShipped:v2:ledger-" + UUID.randomUUID().toString().substring(0, 8));
        UUID dated = UuidV7.next(); // as the outbox names its events: kept with its day's partition
        String eventId = dated.toString();
        String undated = UUID.randomUUID().toString(); // no time in it: kept by row
        for (String id : List.of(eventId, undated)) {
            ClaimResult.Claimed claimed = (ClaimResult.Claimed) handlerClaims.claim(
                    IdempotencyScope.of("acme", "alice", handler, id), "v1:payload",
                    ClaimPolicy.custom().ttl(Duration.ofDays(7)).build());
            handlerClaims.markSucceeded(claimed.token());
        }
        LocalDate day = LocalDate.ofEpochDay(Math.floorDiv(dated.getMostSignificantBits() >>> 16, DAY_MILLIS));
        String request = "k-" + UUID.randomUUID();
        store.markSucceeded(claim(request, ClaimPolicy.custom().lease(Duration.ofMillis(10)).ttl(Duration.ofMillis(50)).build())
                .token(), StoredResponse.of(200, null, new byte[0]));
        await().atMost(Duration.ofSeconds(10)).until(() -> IdempotencyOperations.create(db.dataSource()).countExpirable() >= 1);

        assertThat(raw(concat(new String[] {"idempotency", "expire", "--yes"}, connectionArgs())).exit()).isZero();
        assertThat(raw(concat(new String[] {"idempotency", "purge", "--older-than", "0s", "--yes"}, connectionArgs())).exit())
                .isZero();
        String key = handler.value().substring(handler.value().lastIndexOf(':') + 1);
        CoreRun claims = raw(concat(new String[] {"dispatch", "claims", "--handler-key", key, "--json"}, connectionArgs()));
        CoreRun human = raw(concat(new String[] {"dispatch", "claims", "--handler-key", key}, connectionArgs()));

        assertThat(new JdbcTemplate(db.dataSource()).queryForObject("SELECT count(*) FROM idempotency_record "
                + "WHERE idempotency_key = ?", Long.class, request)).as("the request record is gone").isZero();
        assertThat(handlerStatus(eventId)).as("the handler's claims are kept").isEqualTo(SUCCEEDED);
        assertThat(handlerStatus(undated)).isEqualTo(SUCCEEDED);
        assertThat(claims.exit()).as(claims.err()).isZero();
        List<Map<String, Object>> rows = JsonMapper.builder().build().readValue(claims.out(), new TypeReference<>() { });
        assertThat(rows).singleElement().satisfies(row -> {
            assertThat(row.keySet()).containsExactly("route", "handler_key", "claims", "failed", "processing", "undated",
                    "oldest_day");
            assertThat(row).containsEntry("route", handler.value()).containsEntry("handler_key", key)
                    .containsEntry("claims", 2).containsEntry("failed", 0).containsEntry("processing", 0)
                    .containsEntry("undated", 1).containsEntry("oldest_day", day.toString());
        });
        assertThat(human.exit()).as(human.err()).isZero();
        assertThat(human.out()).contains("UNDATED").contains("OLDEST DAY").contains(handler.value()).contains(day.toString());
    }

    @Test
    void dispatch_partitions_lists_the_undated_partition_first_then_each_day_with_when_it_is_dropped() {
        ClaimPartitions.create(db.dataSource(), ClaimPartitions.Options.ofDefaults()).maintain();
        UUID event = UuidV7.next();
        ClaimResult.Claimed claimed = (ClaimResult.Claimed) handlerClaims.claim(IdempotencyScope.of("acme", "alice",
                Route.of("OrderPlaced:v1:partitioned"), event.toString()), "v1:payload", ClaimPolicy.ofDefaults());
        handlerClaims.markSucceeded(claimed.token());
        long day = Math.floorDiv(event.getMostSignificantBits() >>> 16, DAY_MILLIS);
        String today = "once_handler_claim_" + LocalDate.ofEpochDay(day).toString().replace("-", "");

        CoreRun json = raw(concat(new String[] {"dispatch", "partitions", "--json"}, connectionArgs()));
        CoreRun shorter = raw(concat(new String[] {"dispatch", "partitions", "--claim-retention", "1d", "--json"},
                connectionArgs()));
        CoreRun human = raw(concat(new String[] {"dispatch", "partitions"}, connectionArgs()));
        CoreRun zero = raw(concat(new String[] {"dispatch", "partitions", "--claim-retention", "0s"}, connectionArgs()));

        assertThat(json.exit()).as(json.err()).isZero();
        Map<String, Object> result = json.json();
        assertThat(result.keySet()).containsExactly("claim_retention", "next_to_drop", "partitions");
        assertThat(result).containsEntry("claim_retention", "PT168H").containsEntry("next_to_drop", today);
        List<Map<String, Object>> partitions = partitions(result);
        assertThat(partitions.get(0)).as("the undated partition first, kept by row").containsEntry("name",
                "once_handler_claim_undated").containsEntry("day", null).containsEntry("drop_at", null)
                .containsEntry("due", false).containsEntry("detaching", false);
        assertThat(partitions).allSatisfy(p -> assertThat(p.keySet()).containsExactly("name", "day", "rows", "bytes",
                "drop_at", "due", "detaching"));
        assertThat(partitions).filteredOn(p -> today.equals(p.get("name"))).singleElement().satisfies(p -> {
            assertThat(p).containsEntry("day", LocalDate.ofEpochDay(day).toString())
                    .containsEntry("drop_at", Instant.ofEpochMilli((day + 1) * DAY_MILLIS).plus(Duration.ofDays(7)).toString())
                    .containsEntry("due", false).containsEntry("detaching", false);
            assertThat(((Number) p.get("bytes")).longValue()).isPositive();
        });
        assertThat(partitions).extracting(p -> (String) p.get("name")).as("today and the days ahead")
                .contains(today, "once_handler_claim_" + LocalDate.ofEpochDay(day + 3).toString().replace("-", ""));
        assertThat(partitions.subList(1, partitions.size())).extracting(p -> (String) p.get("day")).as("oldest day first")
                .doesNotContainNull().isSorted();
        assertThat(shorter.exit()).as(shorter.err()).isZero();
        assertThat(shorter.json()).containsEntry("claim_retention", "PT24H");
        assertThat(partitions(shorter.json())).filteredOn(p -> today.equals(p.get("name"))).singleElement()
                .satisfies(p -> assertThat(p).containsEntry("drop_at",
                        Instant.ofEpochMilli((day + 1) * DAY_MILLIS).plus(Duration.ofDays(1)).toString()));
        assertThat(human.exit()).as(human.err()).isZero();
        assertThat(human.out()).contains("PARTITION").contains("once_handler_claim_undated").contains("by row")
                .contains(today).contains("next to drop: " + today);
        assertThat(zero.exit()).isEqualTo(Core.USAGE);
        assertThat(zero.err()).contains("--claim-retention");
        assertThat(zero.out()).isEmpty();
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> partitions(Map<String, Object> json) {
        return (List<Map<String, Object>>) json.get("partitions");
    }

    private static String[] connectionArgs() {
        return CoreRun.connectedTo(db);
    }

    static final long DAY_MILLIS = 86_400_000L;
    /** once_handler_claim.status: 1 processing, 2 succeeded, 3 failed, 4 released. */
    static final int SUCCEEDED = 2;
    static final int RELEASED = 4;

    private static int handlerStatus(String eventId) {
        return new JdbcTemplate(db.dataSource()).queryForObject(
                "SELECT status FROM once_handler_claim WHERE event_id = CAST(? AS uuid)", Integer.class, eventId);
    }

    private static String status(String key) {
        return new JdbcTemplate(db.dataSource()).queryForObject(
                "SELECT status FROM idempotency_record WHERE idempotency_key = ?", String.class, key);
    }
}
