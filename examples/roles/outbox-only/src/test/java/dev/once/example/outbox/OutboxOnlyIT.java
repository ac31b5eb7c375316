package dev.once.example.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.outbox.OutboxEvent;
import dev.once.outbox.OutboxTransactionException;
import dev.once.outbox.OutboxWriter;
import dev.once.test.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.util.ClassUtils;

/** The outbox without the guard: a plain @Transactional service appends, on a real PostgreSQL, with no Kafka at all. */
@SpringBootTest
class OutboxOnlyIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        db.springProperties().forEach((name, value) -> registry.add(name, () -> value));
    }

    @Autowired
    Orders orders;

    @Autowired
    OutboxWriter outbox;

    @Autowired
    ApplicationContext context;

    @Test
    void the_order_and_its_event_commit_together_with_the_payload_as_appended() {
        UUID id = orders.place("acme", "alice", 1250);

        Map<String, Object> event = new JdbcTemplate(db.dataSource()).queryForMap(
                "SELECT tenant_id, actor_id, event_type, payload, content_type FROM outbox_event WHERE aggregate_id = ?",
                id.toString());
        assertThat(event).containsEntry("tenant_id", "acme").containsEntry("actor_id", "alice")
                .containsEntry("event_type", "OrderPlaced").containsEntry("content_type", "application/json");
        assertThat(new String((byte[]) event.get("payload"), StandardCharsets.UTF_8))
                .isEqualTo("{\"order_id\":\"" + id + "\",\"amount_cents\":1250}");
    }

    @Test
    void a_transaction_that_fails_leaves_neither_the_order_nor_its_event() {
        long events = count("SELECT count(*) FROM outbox_event");

        assertThatThrownBy(() -> orders.place("acme", "alice", -5)).hasMessageContaining("check constraint");

        assertThat(count("SELECT count(*) FROM outbox_event")).isEqualTo(events);
        assertThat(count("SELECT count(*) FROM orders WHERE amount_cents < 0")).isZero();
    }

    @Test
    void an_append_outside_a_transaction_is_refused_rather_than_committed_on_its_own() {
        assertThatThrownBy(() -> outbox.append(OutboxEvent.builder().tenantId("acme").actorId("alice")
                .aggregate("order", "o-1").type("OrderPlaced", 1).payloadJson("{}").build()))
                .isInstanceOf(OutboxTransactionException.class).hasMessageContaining("active transaction");
    }

    @Test
    void the_service_runs_without_kafka_the_guard_debezium_jpa_or_micrometer_on_its_classpath() {
        ClassLoader loader = getClass().getClassLoader();
        assertThat(ClassUtils.isPresent("dev.once.guard.IdempotencyMutationGuard", loader)).isFalse();
        assertThat(ClassUtils.isPresent("io.debezium.engine.DebeziumEngine", loader)).isFalse();
        assertThat(ClassUtils.isPresent("org.hibernate.Session", loader)).as("JPA is the application's choice").isFalse();
        assertThat(ClassUtils.isPresent("io.micrometer.core.instrument.MeterRegistry", loader)).isFalse();
        assertThat(context.getBeanNamesForType(OutboxWriter.class)).hasSize(1);
    }

    private long count(String sql) {
        return new JdbcTemplate(db.dataSource()).queryForObject(sql, Long.class);
    }
}
