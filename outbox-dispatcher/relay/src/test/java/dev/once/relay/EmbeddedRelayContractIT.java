package dev.once.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.outbox.OutboxOperations;
import dev.once.test.TestKafka;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.TopicConfig;
import org.junit.jupiter.api.Test;

/**
 * What the relays that run in the application keep besides {@link RelayContractIT}: they hold Kafka's producer, so
 * a record Kafka refuses outright is parked while the other aggregates flow, and an unreachable Kafka is waited out.
 * (Kafka Connect's worker holds its own producer: its task fails, or skips, as its error tolerance says.)
 */
public abstract class EmbeddedRelayContractIT extends RelayContractIT {

    @Test
    void an_oversized_row_is_parked_its_aggregate_waits_and_the_others_flow() {
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version, payload)
                VALUES (gen_random_uuid(), 'acme', 'alice', 'big', 'b-1', 'Blob', 1, convert_to(jsonb_build_object('n', 1, 'blob', repeat('x', 200000))::text, 'UTF8')),
                       (gen_random_uuid(), 'acme', 'alice', 'big', 'b-1', 'Blob', 1, convert_to(jsonb_build_object('n', 2, 'blob', 'small')::text, 'UTF8')),
                       (gen_random_uuid(), 'acme', 'alice', 'big', 'b-2', 'Blob', 1, convert_to(jsonb_build_object('n', 3, 'blob', 'small')::text, 'UTF8'))
                """);
        commitEvents(1, 500);
        started("a", Map.of(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 100_000), RelayOptions.ofDefaults());

        Received orders = consumeUntil(prefix + ".order", 500);
        Received big = consumeUntil(prefix + ".big", 1);

        assertThat(orders.distinctEvents()).isEqualTo(500);
        assertThat(big.records()).singleElement().satisfies(r -> assertThat(r.key()).isEqualTo("b-2"));
        assertThat(jdbc.queryForObject("SELECT park_reason FROM outbox_event WHERE parked_at IS NOT NULL ORDER BY seq LIMIT 1",
                String.class)).contains("RecordTooLarge");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE aggregate_id = 'b-1' AND published_at IS NULL",
                Long.class)).as("the later event of the parked aggregate waits, unpublished").isEqualTo(2);

        // the operator lets the relay send larger records, then redrives the parked event
        stopRelays();
        started("b");
        UUID parked = jdbc.queryForObject("SELECT id FROM outbox_event WHERE parked_at IS NOT NULL ORDER BY seq LIMIT 1",
                UUID.class);
        assertThat(OutboxOperations.create(db.dataSource()).redrive(parked,
                new dev.once.audit.Operator("ops", dev.once.audit.Operator.API, "larger records allowed"))).as("the parked event and the one behind it")
                .isEqualTo(2);

        Received redriven = consumeUntil(prefix + ".big", 3);
        assertThat(redriven.records()).filteredOn(r -> r.key().equals("b-1"))
                .extracting(r -> JSON.readTree(r.value()).get("n").asInt()).containsExactly(1, 2);
        assertThat(redriven.unverified()).as("redriven records whose signature does not verify").isZero();
    }

    @Test
    void a_row_the_broker_refuses_is_parked_and_its_aggregate_waits_behind_it_though_the_producer_would_send_it() {
        TestKafka.createTopic(prefix + ".small", 1, Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, "150000"));
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version, payload)
                VALUES (gen_random_uuid(), 'acme', 'alice', 'small', 's-1', 'Blob', 1, convert_to(jsonb_build_object('n', 1, 'blob', repeat('x', 200000))::text, 'UTF8')),
                       (gen_random_uuid(), 'acme', 'alice', 'small', 's-1', 'Blob', 1, convert_to(jsonb_build_object('n', 2, 'blob', 'small')::text, 'UTF8')),
                       (gen_random_uuid(), 'acme', 'alice', 'small', 's-2', 'Blob', 1, convert_to(jsonb_build_object('n', 3, 'blob', 'small')::text, 'UTF8')),
                       (gen_random_uuid(), 'acme', 'alice', 'small', 's-3', 'Blob', 1, convert_to(jsonb_build_object('n', 4, 'blob', repeat('y', 200000))::text, 'UTF8'))
                """);
        started("a"); // the producer's max.request.size (1 MiB) lets the records go: only the topic refuses them

        await().atMost(Duration.ofSeconds(60)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM outbox_event WHERE parked_at IS NOT NULL AND park_reason LIKE '%RecordTooLarge%max.message.bytes of topic%'",
                Long.class) == 2); // one batch, two aggregates: the limit read again once serves both
        Received small = consumeUntil(prefix + ".small", 1);

        assertThat(small.records()).as("the other aggregate flows; the refused one's later event is not sent ahead of it")
                .singleElement().satisfies(r -> assertThat(r.key()).isEqualTo("s-2"));
        assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE aggregate_id = 's-1' AND published_at IS NULL",
                Long.class)).isEqualTo(2);

        // the operator raises the topic's limit and redrives: the same relay reads the limit again and sends both
        TestKafka.configureTopic(prefix + ".small", Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, "1048588"));
        OutboxOperations operations = OutboxOperations.create(db.dataSource());
        dev.once.audit.Operator operator = new dev.once.audit.Operator("ops", dev.once.audit.Operator.API,
                "topic limit raised");
        assertThat(operations.redrive(jdbc.queryForObject("SELECT id FROM outbox_event WHERE aggregate_id = 's-1' "
                + "AND park_reason LIKE '%RecordTooLarge%'", UUID.class), operator))
                .as("the parked event and the one behind it").isEqualTo(2);
        assertThat(operations.redrive(jdbc.queryForObject("SELECT id FROM outbox_event WHERE aggregate_id = 's-3' "
                + "AND park_reason LIKE '%RecordTooLarge%'", UUID.class), operator)).isEqualTo(1);

        Received redriven = consumeUntil(prefix + ".small", 4);
        assertThat(redriven.records()).filteredOn(r -> r.key().equals("s-1"))
                .extracting(r -> JSON.readTree(r.value()).get("n").asInt()).containsExactly(1, 2);
        assertThat(redriven.records()).filteredOn(r -> r.key().equals("s-3")).hasSize(1);
    }

    @Test
    void an_event_routed_to_a_topic_name_kafka_refuses_is_parked_and_the_others_flow() {
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version, payload)
                VALUES (gen_random_uuid(), 'acme', 'alice', 'no such/name', 'x-1', 'Odd', 1, convert_to('{"n": 1}', 'UTF8'))
                """);
        commitEvents(1, 100);
        started("a");

        assertThat(consumeUntil(prefix + ".order", 100).distinctEvents()).isEqualTo(100);
        await().atMost(Duration.ofSeconds(60)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM outbox_event WHERE parked_at IS NOT NULL AND park_reason LIKE '%InvalidTopic%'",
                Long.class) == 1);
    }

    @Test
    void a_topic_that_takes_smaller_batches_than_the_producer_makes_gets_every_event_in_order() {
        TestKafka.createTopic(prefix + ".narrow", 1, Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, "20000"));
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version, payload)
                SELECT gen_random_uuid(), 'acme', 'alice', 'narrow', 'n-' || (n % 20), 'Noted', 1,
                       convert_to(jsonb_build_object('n', n, 'note', repeat('x', 300))::text, 'UTF8')
                FROM generate_series(1, 2000) AS n ORDER BY n
                """);
        started("a"); // its producer makes batches of up to 128 KiB (batch.size): the topic refuses those

        Received narrow = consumeUntil(prefix + ".narrow", 2000);

        assertThat(narrow.distinctEvents()).isEqualTo(2000);
        assertThat(narrow.outOfOrder()).isZero();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE parked_at IS NOT NULL", Long.class))
                .isZero();
    }

    @Test
    void while_kafka_is_unreachable_the_relay_backs_off_loses_nothing_and_resumes() {
        Map<String, Object> unreachable = new HashMap<>();
        unreachable.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:1");
        commitEvents(1, 200);
        OutboxRelay blind = newRelay("blind",
                new KafkaTransport(unreachable, TopicRouter.byAggregateType(prefix), Duration.ofSeconds(1), SIGNING),
                RelayOptions.ofDefaults().withBackoff(Duration.ofMillis(100), Duration.ofMillis(500)));
        relays.add(blind);
        blind.start();
        await().atMost(Duration.ofSeconds(30)).until(() -> blind.state().status() == OutboxRelay.RelayState.Status.BACKING_OFF);
        assertThat(pending()).isEqualTo(200);
        blind.close();

        started("sighted");
        Received received = consumeUntil(prefix + ".order", 200);
        assertThat(received.distinctEvents()).isEqualTo(200);
    }

    @Test
    void with_nothing_to_publish_a_relay_that_cannot_reach_kafka_is_not_running_and_says_where_it_looked() {
        assertThat(pending()).isZero();
        OutboxRelay idle = newRelay("idle", new KafkaTransport(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                "127.0.0.1:1"), TopicRouter.byAggregateType(prefix), Duration.ofSeconds(1), SIGNING),
                RelayOptions.ofDefaults().withBackoff(Duration.ofMillis(100), Duration.ofMillis(500)));
        relays.add(idle);
        idle.start();

        await().atMost(Duration.ofSeconds(30)).until(() -> idle.state().status() == OutboxRelay.RelayState.Status.BACKING_OFF);
        assertThat(idle.state().detail()).contains("Kafka at 127.0.0.1:1 did not answer");
    }
}
