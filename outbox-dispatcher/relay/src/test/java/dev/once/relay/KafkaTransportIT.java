package dev.once.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.test.SecuredKafka;
import dev.once.wire.OutboxMessage;
import dev.once.wire.RecordSigning;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.Test;

/** What the transport needs of the relay's principal, on a broker that authorizes (SASL, ACLs). */
class KafkaTransportIT {

    @Test
    void a_principal_that_may_write_but_not_read_the_topics_configuration_still_publishes() throws Exception {
        String topic = "grants-" + UUID.randomUUID();
        SecuredKafka.createTopic(topic, 1);
        SecuredKafka.grant(SecuredKafka.STRANGER, topic, AclOperation.WRITE, AclOperation.DESCRIBE);
        Map<String, Object> stranger = SecuredKafka.saslClientProperties(SecuredKafka.STRANGER,
                SecuredKafka.STRANGER_PASSWORD);
        try (Admin admin = Admin.create(stranger)) {
            assertThatThrownBy(() -> admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC,
                    topic))).all().get(30, TimeUnit.SECONDS)).as("the premise: no DESCRIBE_CONFIGS")
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(TopicAuthorizationException.class);
        }
        OutboxMessage message = new OutboxMessage(UUID.randomUUID(), "acme", "alice", "order", "o-1", "OrderPlaced", 1,
                "{}".getBytes(StandardCharsets.UTF_8), "application/json", Map.of(), Instant.now());

        try (KafkaTransport transport = new KafkaTransport(stranger, TopicRouter.fixed(topic), Duration.ofSeconds(10),
                RecordSigning.off())) {
            assertThat(transport.send(List.of(message)).acknowledged()).containsExactly(message.id());
        }
    }
}
