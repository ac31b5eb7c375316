package dev.once.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.test.SecuredKafka;
import dev.once.test.TestKafka;
import dev.once.wire.OutboxMessage;
import dev.once.wire.RecordSigning;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.Test;

/** What the transport needs of the relay's principal, on a broker that authorizes (SASL, ACLs), and of its producer. */
class KafkaTransportIT {

    @Test
    void a_producer_replaced_while_another_thread_sends_with_it_is_closed_only_when_that_send_ends() throws Exception {
        String prefix = "shared-" + UUID.randomUUID();
        TestKafka.createTopic(prefix + ".wide", 1);
        TestKafka.createTopic(prefix + ".narrow", 1, Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, "20000"));
        List<OutboxMessage> wide = IntStream.rangeClosed(1, 100).mapToObj(n -> message("wide", "w-" + n)).toList();
        OutboxMessage narrow = message("narrow", "n-1");
        CompletableFuture<EventTransport.Delivery> narrowSent = new CompletableFuture<>();
        ObservationRegistry observations = ObservationRegistry.create();

        try (KafkaTransport transport = new KafkaTransport(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                TestKafka.bootstrapServers()), TopicRouter.byAggregateType(prefix), Duration.ofSeconds(10),
                RecordSigning.off(), observations)) {
            // while this thread is in the middle of the wide batch, another sends to the narrow topic, whose limit
            // makes the transport replace its producer (smaller batches) before that send
            observations.observationConfig().observationHandler(new ObservationHandler<>() {
                @Override
                public void onStart(Observation.Context context) {
                    if (context.getLowCardinalityKeyValue("topic").getValue().endsWith(".wide") && !narrowSent.isDone()
                            && wide.get(50).id().toString().equals(context.getHighCardinalityKeyValue("once.event.id").getValue())) {
                        narrowSent.complete(CompletableFuture.supplyAsync(() -> transport.send(List.of(narrow))).join());
                    }
                }

                @Override
                public boolean supportsContext(Observation.Context context) {
                    return true;
                }
            });

            assertThat(transport.send(wide).acknowledged()).as("the wide batch, on the producer replaced under it")
                    .hasSize(100);
            assertThat(narrowSent.get(60, TimeUnit.SECONDS).acknowledged()).containsExactly(narrow.id());
            assertThat(transport.send(wide.subList(0, 1)).acknowledged()).as("the next send takes the new producer")
                    .hasSize(1);
        }
    }

    private static OutboxMessage message(String aggregateType, String aggregateId) {
        return new OutboxMessage(UUID.randomUUID(), "acme", "alice", aggregateType, aggregateId, "Noted", 1,
                "{}".getBytes(StandardCharsets.UTF_8), "application/json", Map.of(), Instant.now());
    }

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
