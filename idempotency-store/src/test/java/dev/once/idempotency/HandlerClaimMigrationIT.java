package dev.once.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.test.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * V11 moves the handlers' claims of a populated database out of {@code idempotency_record}: not one live claim is
 * lost, each is found where the store looks for it, and request records stay where they were.
 */
class HandlerClaimMigrationIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create();

    static final Route HANDLER = Route.of("OrderPlaced:v1:projection");
    static final Route OTHER = Route.of("OrderPlaced:v2:mailer");

    static String hash(Route route, String payload) {
        return RequestFingerprint.ofPayload(route, "application/json", payload.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void live_claims_move_to_their_days_and_are_skipped_on_redelivery_and_requests_stay() {
        Flyway.configure().dataSource(db.dataSource()).locations(OnceMigrations.LOCATION)
                .table(OnceMigrations.HISTORY_TABLE).baselineOnMigrate(true).baselineVersion("0").target("10")
                .load().migrate();
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        IdempotencyStore before = IdempotencyStore.create(db.dataSource()); // where V10's dispatcher claimed
        ClaimPolicy week = ClaimPolicy.custom().lease(Duration.ofSeconds(30)).ttl(Duration.ofDays(7)).build();
        long now = jdbc.queryForObject("SELECT CAST(EXTRACT(EPOCH FROM statement_timestamp()) * 1000 AS bigint)", Long.class);
        List<UUID> succeeded = new ArrayList<>();
        for (int i = 0; i < 500; i++) { // spread over the last five days
            UUID event = HandlerClaimStoreIT.v7(now - i * 864_000L);
            for (Route route : List.of(HANDLER, OTHER)) {
                ClaimResult.Claimed c = (ClaimResult.Claimed) before.claim(
                        IdempotencyScope.of("acme", "alice", route, event.toString()), hash(route, "{}"), week);
                before.markSucceeded(c.token(), StoredResponse.of(200, null, new byte[0]));
            }
            succeeded.add(event);
        }
        UUID failed = HandlerClaimStoreIT.v7(now);
        ClaimResult.Claimed f = (ClaimResult.Claimed) before.claim(
                IdempotencyScope.of("acme", "alice", HANDLER, failed.toString()), hash(HANDLER, "{}"), week);
        before.markFailed(f.token(), StoredResponse.of(500, "text/plain", "projection is down"));
        UUID notV7 = UUID.randomUUID();
        ClaimResult.Claimed u = (ClaimResult.Claimed) before.claim(
                IdempotencyScope.of("acme", "alice", HANDLER, notV7.toString()), hash(HANDLER, "{}"), week);
        before.markSucceeded(u.token(), StoredResponse.of(200, null, new byte[0]));
        UUID released = HandlerClaimStoreIT.v7(now);
        ClaimResult.Claimed r = (ClaimResult.Claimed) before.claim(
                IdempotencyScope.of("acme", "alice", HANDLER, released.toString()), hash(HANDLER, "{}"), week);
        before.release(r.token());
        IdempotencyScope request = IdempotencyScope.of("acme", "alice", Route.http("POST", "/orders"), "order-1");
        ClaimResult.Claimed q = (ClaimResult.Claimed) before.claim(request, "v1:request", ClaimPolicy.ofDefaults());
        before.markSucceeded(q.token(), StoredResponse.of(201, "application/json", "{\"id\":1}"));

        OnceMigrations.migrate(db.dataSource());

        HandlerClaimStore after = HandlerClaimStore.create(db.dataSource());
        for (UUID event : succeeded) {
            for (Route route : List.of(HANDLER, OTHER)) {
                assertThat(after.claim(IdempotencyScope.of("acme", "alice", route, event.toString()), hash(route, "{}"), week))
                        .as("%s of %s", route, event).isInstanceOf(ClaimResult.Replay.class);
            }
        }
        assertThat(after.claim(IdempotencyScope.of("acme", "alice", HANDLER, failed.toString()), hash(HANDLER, "{}"), week))
                .isInstanceOfSatisfying(ClaimResult.Failed.class,
                        x -> assertThat(x.response().bodyAsString()).isEqualTo("projection is down"));
        assertThat(HandlerClaims.create(db.dataSource()).failed("projection", 10)).singleElement()
                .satisfies(x -> assertThat(x.eventId()).isEqualTo(failed.toString()));
        assertThat(after.claim(IdempotencyScope.of("acme", "alice", HANDLER, notV7.toString()), hash(HANDLER, "{}"), week))
                .isInstanceOf(ClaimResult.Replay.class);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM once_handler_claim", Long.class))
                .as("every live claim; the released one was not live").isEqualTo(2 * 500 + 2);
        assertThat(jdbc.queryForObject("SELECT count(DISTINCT tableoid) FROM once_handler_claim WHERE day > 0", Long.class))
                .as("five days back, today included").isBetween(5L, 6L);
        assertThat(jdbc.queryForList("SELECT route FROM idempotency_record", String.class)).containsExactly("POST /orders");
        assertThat(before.claim(request, "v1:request", ClaimPolicy.ofDefaults())).isInstanceOf(ClaimResult.Replay.class);
    }
}
