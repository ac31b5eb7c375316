package dev.once.example.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.test.ReplicationCleanup;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.wire.WireFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.util.ClassUtils;

/**
 * The CDC relay's role on exactly its declared dependencies (the combination that failed at startup for want of
 * Micrometer): it starts, streams the WAL and publishes what its transactions appended, signed.
 */
class CdcRelayRoleIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    @Test
    void the_relay_starts_without_micrometer_or_jpa_and_publishes_from_the_wal() {
        String prefix = "cdcrole" + UUID.randomUUID().toString().substring(0, 8);
        String slot = prefix + "_slot";
        TestKafka.createTopic(prefix + ".order", 1);
        List<String> args = new ArrayList<>(List.of("--spring.kafka.bootstrap-servers=" + TestKafka.bootstrapServers(),
                "--once.outbox.relay.topic-prefix=" + prefix, "--once.outbox.relay.cdc.slot-name=" + slot,
                "--ONCE_SIGNING_KEY=a role test key of thirty-two bytes or more"));
        db.springProperties().forEach((name, value) -> args.add("--" + name + "=" + value));
        try (ConfigurableApplicationContext service = SpringApplication.run(CdcRelayApplication.class,
                args.toArray(String[]::new))) {
            CdcRelayApplication.Refunds refunds = service.getBean(CdcRelayApplication.Refunds.class);
            UUID first = refunds.refund("acme", "alice", "o-1");
            UUID second = refunds.refund("acme", "alice", "o-2");

            Set<String> published = TestKafka.distinctHeaders(TestKafka.bootstrapServers(), prefix + ".order",
                    WireFormat.EVENT_ID, 2);
            assertThat(published).containsExactlyInAnyOrder(first.toString(), second.toString());
            ClassLoader loader = getClass().getClassLoader();
            assertThat(ClassUtils.isPresent("io.micrometer.core.instrument.MeterRegistry", loader)).isFalse();
            assertThat(ClassUtils.isPresent("org.hibernate.Session", loader)).isFalse();
        } finally {
            ReplicationCleanup.drop(db.dataSource(), slot, slot);
        }
    }
}
