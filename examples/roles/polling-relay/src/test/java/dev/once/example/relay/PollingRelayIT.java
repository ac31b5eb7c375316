package dev.once.example.relay;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.wire.WireFormat;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.util.ClassUtils;

/** The polling-relay role on exactly its declared dependencies: it starts, appends and publishes to a real Kafka. */
@SpringBootTest
class PollingRelayIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    static final String PREFIX = "role" + UUID.randomUUID().toString().substring(0, 8);

    @DynamicPropertySource
    static void infrastructure(DynamicPropertyRegistry registry) {
        db.springProperties().forEach((name, value) -> registry.add(name, () -> value));
        registry.add("spring.kafka.bootstrap-servers", TestKafka::bootstrapServers);
        registry.add("once.outbox.relay.topic-prefix", () -> PREFIX);
        registry.add("ONCE_SIGNING_KEY", () -> "a role test key of thirty-two bytes or more");
    }

    @Autowired
    Shipments shipments;

    @Test
    void an_event_appended_in_a_transaction_reaches_kafka_signed() {
        TestKafka.createTopic(PREFIX + ".order", 1);
        UUID first = shipments.ship("acme", "alice", "o-1");
        UUID second = shipments.ship("acme", "alice", "o-2");

        Set<String> published = TestKafka.distinctHeaders(TestKafka.bootstrapServers(), PREFIX + ".order",
                WireFormat.EVENT_ID, 2);
        assertThat(published).containsExactlyInAnyOrder(first.toString(), second.toString());
        assertThat(TestKafka.distinctHeaders(TestKafka.bootstrapServers(), PREFIX + ".order",
                WireFormat.SIGNATURE_KEY, 1)).containsExactly("main");
    }

    @Test
    void the_role_runs_without_debezium_or_micrometer_on_its_classpath() {
        ClassLoader loader = getClass().getClassLoader();
        assertThat(ClassUtils.isPresent("io.debezium.engine.DebeziumEngine", loader)).isFalse();
        assertThat(ClassUtils.isPresent("io.micrometer.core.instrument.MeterRegistry", loader)).isFalse();
    }
}
