package dev.once.example.guard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.test.TestDatabase;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.util.ClassUtils;

/** The guard-only role on exactly its declared dependencies: it starts and a retried POST takes effect once. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class GuardOnlyIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        db.springProperties().forEach((name, value) -> registry.add(name, () -> value));
    }

    @LocalServerPort
    int port;

    @Test
    void a_retried_transfer_takes_effect_once_and_the_retry_replays_the_first_answer() throws Exception {
        String key = "t-" + UUID.randomUUID();
        HttpResponse<String> first = post(key, "{\"amount_cents\":1250}");
        HttpResponse<String> retry = post(key, "{\"amount_cents\":1250}");
        HttpResponse<String> reused = post(key, "{\"amount_cents\":9900}");

        assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(reused.statusCode()).as("the key reused with another body").isEqualTo(422);
        assertThat(new JdbcTemplate(db.dataSource()).queryForObject("SELECT count(*) FROM transfer", Long.class))
                .isEqualTo(1);
    }

    @Test
    void the_role_runs_without_kafka_or_debezium_on_its_classpath() {
        ClassLoader loader = getClass().getClassLoader();
        assertThat(ClassUtils.isPresent("dev.once.relay.OutboxRelay", loader)).isFalse();
        assertThat(ClassUtils.isPresent("dev.once.dispatch.EventDispatcher", loader)).isFalse();
        assertThat(ClassUtils.isPresent("io.debezium.engine.DebeziumEngine", loader)).isFalse();
    }

    private HttpResponse<String> post(String key, String body) throws Exception {
        String basic = Base64.getEncoder().encodeToString("alice:alice-password".getBytes(StandardCharsets.UTF_8));
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/transfers"))
                .header("Content-Type", "application/json").header("Authorization", "Basic " + basic)
                .header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.ofString(body)).build();
        return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
    }
}
