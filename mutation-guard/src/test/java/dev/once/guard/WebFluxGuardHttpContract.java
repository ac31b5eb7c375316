package dev.once.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.once.guard.reactiveapp.ReactiveAccountsController;
import dev.once.test.TestDatabase;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;

/** The HTTP contract on WebFlux, and what WebFlux adds: functional routes, and Monos subscribed outside a request. */
abstract class WebFluxGuardHttpContract extends GuardHttpContract {

    @Autowired
    ReactiveAccountsController controller;

    static void service(DynamicPropertyRegistry registry, TestDatabase db, String transactions) {
        db.springProperties().forEach((name, value) -> registry.add(name, () -> value));
        registry.add("once.idempotency.reactive.transactions", () -> transactions);
    }

    @Test
    void a_declared_method_subscribed_outside_any_request_refuses_to_run_rather_than_run_unguarded() {
        long before = count("SELECT count(*) FROM account");

        assertThatThrownBy(() -> controller.create(new ReactiveAccountsController.CreateAccount("Ada", "a@example.com"),
                null).block(Duration.ofSeconds(30)))
                .isInstanceOf(dev.once.OnceConfigurationException.class)
                .hasMessageContaining("@Idempotent ReactiveAccountsController.create was subscribed outside a WebFlux request")
                .hasMessageContaining("ReactiveMutationGuard.run");
        assertThat(count("SELECT count(*) FROM account")).isEqualTo(before);
        assertThat(probe.runs("create")).isZero();
    }

    @Test
    void a_functional_route_replays_the_first_response_byte_for_byte_and_runs_once() {
        String key = UUID.randomUUID().toString();

        HttpResponse<String> first = http.post("/fn/accounts", "alice", key, ADA);
        HttpResponse<String> second = http.post("/fn/accounts", "alice", key, ADA);
        HttpResponse<String> other = http.post("/fn/accounts", "alice", key, "{\"name\":\"Grace\"}");

        assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
        assertThat(second.statusCode()).isEqualTo(201);
        assertThat(second.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(second.body()).isEqualTo(first.body());
        assertThat(second.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location")).isPresent();
        assertProblem(other, 422, "IDEMPOTENCY_KEY_CONFLICT");
        assertProblem(http.post("/fn/accounts", "alice", null, ADA), 400, "IDEMPOTENCY_KEY_MISSING");
        assertThat(probe.runs("fn-create")).isEqualTo(1);
        String accountId = body(first).get("id").toString();
        assertThat(count("SELECT count(*) FROM account WHERE id = ?::uuid AND tenant_id = 'acme'", accountId)).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM outbox_event o JOIN idempotency_record r ON r.outbox_event_id = o.id"
                + " WHERE r.idempotency_key = ? AND o.aggregate_id = ?", key, accountId)).isEqualTo(1);
    }

    @Test
    void the_work_sees_the_requests_reactor_context_such_as_its_security_context() {
        HttpResponse<String> response = http.post("/accounts/whoami", "bob", UUID.randomUUID().toString(), "{}");

        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(body(response)).containsEntry("user", "bob");
    }

    @Test
    void a_body_a_functional_handler_cannot_decode_is_400_not_stored_and_the_key_stays_free() {
        String key = UUID.randomUUID().toString();

        HttpResponse<String> undecodable = http.post("/fn/accounts", "alice", key, "{\"name\":{\"first\":\"Ada\"}}");
        HttpResponse<String> corrected = http.post("/fn/accounts", "alice", key, ADA);

        assertProblem(undecodable, 400, "MALFORMED_BODY");
        assertThat(undecodable.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(corrected.statusCode()).as(corrected.body()).isEqualTo(201);
        assertThat(corrected.headers().firstValue("Idempotent-Replayed")).isEmpty();
        assertThat(count("SELECT count(*) FROM idempotency_record WHERE idempotency_key = ? AND status = 'succeeded'",
                key)).isEqualTo(1);
    }

    @Test
    void many_concurrent_requests_with_one_key_run_a_functional_route_once() {
        String key = UUID.randomUUID().toString();
        probe.close();
        List<CompletableFuture<HttpResponse<String>>> requests = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            requests.add(CompletableFuture.supplyAsync(() -> http.post("/fn/accounts", "bob", key, ADA), clients));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> probe.entered() == 1);
        await().atMost(Duration.ofSeconds(30)).until(() -> requests.stream().filter(CompletableFuture::isDone).count() >= 19);
        probe.open();

        List<HttpResponse<String>> responses = requests.stream().map(CompletableFuture::join).toList();
        assertThat(responses).filteredOn(r -> r.statusCode() == 201).hasSize(1);
        assertThat(responses).filteredOn(r -> r.statusCode() == 409).hasSize(19);
        assertThat(probe.runs("fn-create")).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM idempotency_record WHERE idempotency_key = ?", key)).isEqualTo(1);
    }
}
