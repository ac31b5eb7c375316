package dev.once.example.handlers;

import dev.once.dispatch.HandlerRegistration;
import dev.once.example.ReferenceProperties;
import dev.once.wire.WireFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.NewTopic;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.config.TopicBuilder;
import org.springframework.kafka.core.KafkaAdmin;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The service's three exactly-once handlers, declared as plain {@link HandlerRegistration} beans, and the topics
 * the relay publishes to (created at startup by spring-kafka's {@link KafkaAdmin}).
 *
 * <ul>
 *   <li>{@code account-projection} (TRANSACTIONAL): accounts per tenant. The claim, the count and the effect row
 *       commit together, so a redelivery finds the claim and skips.</li>
 *   <li>{@code welcome-email} (LEASED): an external effect. It "sends" by recording the email with the event's
 *       derived key, which a real mail service would deduplicate on.</li>
 *   <li>{@code task-runner} (TRANSACTIONAL): runs a submitted task and moves it to {@code done}.</li>
 * </ul>
 */
@Configuration(proxyBeanMethods = false)
class Handlers {

    static final String ACCOUNT_PROJECTION = "account-projection";
    static final String WELCOME_EMAIL = "welcome-email";
    static final String TASK_RUNNER = "task-runner";

    /**
     * The relay's topic prefix: each handler declares the topic its events arrive on, so that the application does
     * not start if {@code once.dispatcher.topics} leaves one out.
     */
    static final String PREFIX = "${once.outbox.relay.topic-prefix:once}";

    static final String COUNT_ACCOUNT = """
            INSERT INTO account_count (tenant_id, accounts) VALUES (?, 1)
            ON CONFLICT (tenant_id) DO UPDATE SET accounts = account_count.accounts + 1
            """;
    static final String RECORD_EFFECT = """
            INSERT INTO handler_effect (handler_key, event_id, tenant_id) VALUES (?, ?, ?)
            """;
    static final String SEND_EMAIL = """
            INSERT INTO outbound_email (derived_key, event_id, tenant_id, to_address, subject) VALUES (?, ?, ?, ?, ?)
            """;
    static final String FINISH_TASK = """
            UPDATE task SET state = 'done', result = ?::jsonb, done_at = statement_timestamp()
             WHERE id = ? AND tenant_id = ? AND state = 'submitted'
            """;

    @Bean
    HandlerRegistration accountProjection(JdbcTemplate jdbc, @Value(PREFIX) String prefix) {
        return HandlerRegistration.transactional("AccountCreated", 1, ACCOUNT_PROJECTION, event -> {
            jdbc.update(COUNT_ACCOUNT, event.tenantId());
            jdbc.update(RECORD_EFFECT, ACCOUNT_PROJECTION, event.eventId(), event.tenantId());
        }).onTopic(WireFormat.topic(prefix, "account"));
    }

    @Bean
    HandlerRegistration welcomeEmail(JdbcTemplate jdbc, JsonMapper json, @Value(PREFIX) String prefix) {
        return HandlerRegistration.leased("AccountCreated", 1, WELCOME_EMAIL, event -> {
            JsonNode account = json.readTree(event.payloadJson());
            jdbc.update(SEND_EMAIL, event.derivedKey(), event.eventId(), event.tenantId(),
                    account.path("email").asString(), "Welcome, " + account.path("name").asString());
        }).onTopic(WireFormat.topic(prefix, "account"));
    }

    @Bean
    HandlerRegistration taskRunner(JdbcTemplate jdbc, JsonMapper json, @Value(PREFIX) String prefix) {
        return HandlerRegistration.transactional("TaskSubmitted", 1, TASK_RUNNER, event -> {
            JsonNode task = json.readTree(event.payloadJson());
            String result = json.writeValueAsString(Map.of(
                    "ran", task.path("type").asString(), "params", task.path("params").size(), "by", TASK_RUNNER));
            jdbc.update(FINISH_TASK, result, task.path("task_id").asString(), event.tenantId());
            jdbc.update(RECORD_EFFECT, TASK_RUNNER, event.eventId(), event.tenantId());
        }).onTopic(WireFormat.topic(prefix, "task"));
    }

    /** The relay's topics ({@code <prefix>.<aggregate_type>}) and the dispatcher's dead-letter topics. */
    @Bean
    KafkaAdmin.NewTopics onceTopics(ReferenceProperties properties,
                                    @Value(PREFIX) String prefix) {
        List<NewTopic> topics = new ArrayList<>();
        for (String aggregate : List.of("account", "file", "task")) {
            String topic = WireFormat.topic(prefix, aggregate);
            topics.add(TopicBuilder.name(topic).partitions(properties.topicPartitions())
                    .replicas(properties.topicReplicas()).build());
            topics.add(TopicBuilder.name(topic + WireFormat.DEAD_LETTER_SUFFIX).partitions(1)
                    .replicas(properties.topicReplicas()).build());
        }
        return new KafkaAdmin.NewTopics(topics.toArray(NewTopic[]::new));
    }
}
