package dev.once.guard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.guard.app.GuardTestApplication;
import dev.once.test.TestDatabase;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The HTTP contract on Spring MVC, and what only Spring MVC has: methods called as code, JPA domain events. */
@SpringBootTest(classes = GuardTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class GuardHttpContractIT extends GuardHttpContract {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(10);

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", db::jdbcUrl);
        registry.add("spring.datasource.username", () -> db.server().username());
        registry.add("spring.datasource.password", () -> db.server().password());
        registry.add("spring.datasource.hikari.maximum-pool-size", () -> "40");
        registry.add("spring.jpa.hibernate.ddl-auto", () -> "create");
        registry.add("spring.jpa.open-in-view", () -> "false");
    }

    @Autowired
    dev.once.guard.app.DocumentsController documents;

    @Override
    TestDatabase db() {
        return db;
    }

    @Test
    void a_declared_method_called_as_code_from_another_route_returns_its_response_instead_of_answering_the_request() {
        String key = UUID.randomUUID().toString();
        String path = "/accounts/" + UUID.randomUUID() + "/notes/forwarded";

        HttpResponse<String> first = http.post(path, "alice", key, "{\"text\":\"hi\"}");
        HttpResponse<String> repeat = http.post(path, "alice", key, "{\"text\":\"hi\"}");

        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(repeat.statusCode()).isEqualTo(200);
        assertThat(body(first)).containsEntry("inner_status", 201).containsEntry("inner_replayed", "null");
        assertThat(body(repeat)).containsEntry("inner_status", 201).containsEntry("inner_replayed", "true");
        assertThat(probe.runs("notes")).isEqualTo(1);
    }

    @Test
    void a_declared_method_called_outside_any_request_refuses_to_run_rather_than_run_unguarded() {
        long before = jdbc.queryForObject("SELECT count(*) FROM guard_document", Long.class);

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> documents.store("{}".getBytes(), null))
                .isInstanceOf(dev.once.OnceConfigurationException.class)
                .hasMessageContaining("@Idempotent DocumentsController.store was called outside a Spring MVC request")
                .hasMessageContaining("IdempotencyMutationGuard.run");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM guard_document", Long.class)).isEqualTo(before);
    }

    @Test
    void a_domain_event_the_aggregate_registers_is_bound_to_the_record_and_a_replay_writes_no_second_row() {
        String key = UUID.randomUUID().toString();

        HttpResponse<String> first = http.post("/accounts/registered", "alice", key, ADA);
        HttpResponse<String> replay = http.post("/accounts/registered", "alice", key, ADA);

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(probe.runs("register")).isEqualTo(1);
        String accountId = body(first).get("id").toString();
        List<Map<String, Object>> events = jdbc.queryForList(
                "SELECT id, tenant_id, actor_id, event_type FROM outbox_event WHERE aggregate_id = ?", accountId);
        assertThat(events).singleElement().satisfies(event -> {
            assertThat(event.get("event_type")).isEqualTo("AccountRegistered");
            assertThat(event.get("actor_id")).as("the request's user, not the event's say").isEqualTo("alice");
        });
        assertThat(jdbc.queryForObject("SELECT outbox_event_id FROM idempotency_record WHERE idempotency_key = ?",
                UUID.class, key)).isEqualTo(events.get(0).get("id"));
    }
}
