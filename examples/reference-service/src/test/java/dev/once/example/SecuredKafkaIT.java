package dev.once.example;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.test.SecuredKafka;
import dev.once.test.TestDatabase;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * The reference service's whole chain, a guarded POST /accounts through the outbox and the relay to both handlers, on a
 * broker that needs authentication, configured as a deployment would: Kafka credentials in {@code spring.kafka.*}
 * only (SASL/PLAIN; TLS with the trust store as a Spring Boot SSL bundle). Once adds no Kafka settings of its own.
 */
class SecuredKafkaIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    @TempDir
    Path dataDir;

    static final JsonMapper JSON = JsonMapper.builder().build();

    static final String EFFECTS_OF = """
            SELECT (SELECT count(*) FROM handler_effect e JOIN outbox_event o ON o.id = e.event_id
                     WHERE o.aggregate_id = ? AND e.handler_key = 'account-projection')
                 + (SELECT count(*) FROM outbound_email m JOIN outbox_event o ON o.id = m.event_id
                     WHERE o.aggregate_id = ?)
            """;

    @Test
    void over_sasl_a_created_account_reaches_both_handlers_once_with_the_cdc_relay() {
        try (ServiceInstances instances = new ServiceInstances(db, dataDir)) {
            ConfigurableApplicationContext service = instances.start(
                    SecuredKafka.springSasl(SecuredKafka.USER, SecuredKafka.PASSWORD));

            assertTheChainRuns(service);
        }
    }

    @Test
    void over_tls_trusting_an_ssl_bundle_a_created_account_reaches_both_handlers_once_with_the_polling_relay() {
        try (ServiceInstances instances = new ServiceInstances(db, dataDir)) {
            List<String> settings = new ArrayList<>(SecuredKafka.springTlsBundle("kafka"));
            settings.add("once.outbox.relay.mode=polling");
            ConfigurableApplicationContext service = instances.start(settings);

            assertTheChainRuns(service);
        }
    }

    private static void assertTheChainRuns(ConfigurableApplicationContext service) {
        Http http = new Http(ServiceInstances.baseOf(service));
        HttpResponse<String> created = http.post("alice", "/accounts", "secured-" + UUID.randomUUID(),
                "{\"name\":\"Grace\",\"email\":\"grace@example.com\"}");
        assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
        String account = JSON.readTree(created.body()).path("id").asString();

        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        await().atMost(Duration.ofSeconds(60)).until(() -> jdbc.queryForObject(EFFECTS_OF, Long.class, account, account) == 2);
        HttpResponse<String> health = http.get(null, "/actuator/health");
        assertThat(health.body()).contains("\"status\":\"UP\"");
    }
}
