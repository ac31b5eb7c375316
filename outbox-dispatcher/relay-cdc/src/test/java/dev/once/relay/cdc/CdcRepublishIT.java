package dev.once.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.autoconfigure.OnceStoreAutoConfiguration;
import dev.once.dispatch.HandlerRegistration;
import dev.once.dispatch.autoconfigure.OnceDispatcherAutoConfiguration;
import dev.once.idempotency.OnceMigrations;
import dev.once.outbox.OutboxEvent;
import dev.once.outbox.OutboxWriter;
import dev.once.relay.autoconfigure.OnceRelayAutoConfiguration;
import dev.once.relay.cdc.autoconfigure.OnceCdcRelayAutoConfiguration;
import dev.once.test.ReplicationCleanup;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.test.TestSigning;
import dev.once.wire.WireFormat;
import dev.once.wire.autoconfigure.OnceSigningAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A CDC slot created anew (after a failover that lost it, or by an operator) snapshots the rows still pending and so
 * publishes events that were published before: those whose row the relay never got to delete or mark
 * ({@code CdcRelay.settleLater}). One service, as Boot wires it: the CDC relay and the dispatcher, with a request TTL
 * of 1 second and handlers' claims kept an hour. The republished events come long after the request TTL, within
 * the claim retention, and every handler skips them.
 */
class CdcRepublishIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(10);

    static final String SLOT = ("once_republish_" + UUID.randomUUID().toString().substring(0, 8)).toLowerCase();

    static JdbcTemplate jdbc;

    @BeforeAll
    static void schema() {
        OnceMigrations.migrate(db.dataSource());
        jdbc = new JdbcTemplate(db.dataSource());
        jdbc.execute("CREATE TABLE republish_effect (event_id uuid NOT NULL)");
    }

    @AfterAll
    static void dropSlot() {
        ReplicationCleanup.drop(db.dataSource(), SLOT, SLOT);
    }

    @Configuration(proxyBeanMethods = false)
    static class Projection {

        @Bean
        HandlerRegistration projection(DataSource dataSource) {
            return HandlerRegistration.transactional("OrderPlaced", 1, "projection",
                    event -> new JdbcTemplate(dataSource).update("INSERT INTO republish_effect VALUES (?)", event.eventId()));
        }
    }

    private ApplicationContextRunner service(String prefix) {
        DataSource shared = new DelegatingDataSource(db.dataSource());
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class,
                        DataSourceTransactionManagerAutoConfiguration.class, OnceStoreAutoConfiguration.class,
                        OnceCdcRelayAutoConfiguration.class, OnceRelayAutoConfiguration.class,
                        OnceDispatcherAutoConfiguration.class, OnceSigningAutoConfiguration.class))
                .withPropertyValues(TestSigning.PROPERTY)
                .withBean(DataSource.class, () -> shared)
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withUserConfiguration(Projection.class)
                .withPropertyValues("spring.kafka.bootstrap-servers=" + TestKafka.bootstrapServers(),
                        "once.outbox.relay.mode=cdc", "once.outbox.relay.cdc.slot-name=" + SLOT,
                        "once.outbox.relay.cdc.publication-name=" + SLOT, "once.outbox.relay.cdc.leader-poll=200ms",
                        "once.outbox.relay.topic-prefix=" + prefix, "once.dispatcher.topics=" + prefix + ".order",
                        "once.dispatcher.group-id=republish-" + prefix, "once.dispatcher.claim-retention=1h",
                        "once.outbox.relay.retention=1h", "once.idempotency.ttl=1s");
    }

    @Test
    void events_republished_by_a_recreated_slot_after_the_request_ttl_are_skipped_by_every_handler() throws Exception {
        String prefix = "rp" + UUID.randomUUID().toString().substring(0, 8);
        TestKafka.createTopic(prefix + ".order", 1);
        TestKafka.createTopic(prefix + ".order" + WireFormat.DEAD_LETTER_SUFFIX, 1);
        List<UUID> events = new ArrayList<>();

        service(prefix).run(context -> {
            OutboxWriter writer = context.getBean(OutboxWriter.class);
            new TransactionTemplate(context.getBean(PlatformTransactionManager.class)).executeWithoutResult(tx -> {
                for (int i = 0; i < 3; i++) {
                    events.add(writer.append(OutboxEvent.builder().tenantId("acme").actorId("alice")
                            .aggregate("order", "o-" + i).type("OrderPlaced", 1).payloadJson("{\"n\":" + i + "}").build()));
                }
            });
            await().atMost(Duration.ofSeconds(90)).until(() -> effects() == 3);
            await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM outbox_event WHERE published_at IS NOT NULL", Long.class) == 3);
        });
        // Published, and kept for once.outbox.relay.retention; then the relay's record of it is lost: pending again.
        jdbc.update("UPDATE outbox_event SET published_at = NULL");
        // The handler's claims, one per event and succeeded, outlive the request TTL (1 s). A claim row carries no time
        // of its own: all three exist now, so they are older than the request TTL once a second more has passed.
        assertThat(jdbc.queryForObject("""
                SELECT count(*) FROM once_handler_claim c JOIN once_handler_route r ON r.id = c.route_id
                WHERE r.route LIKE '%:projection' AND c.status = 2""", Long.class)).isEqualTo(3);
        java.sql.Timestamp claimed = jdbc.queryForObject("SELECT statement_timestamp()", java.sql.Timestamp.class);
        await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                "SELECT statement_timestamp() > CAST(? AS timestamptz) + interval '1100 milliseconds'", Boolean.class, claimed));
        ReplicationCleanup.drop(db.dataSource(), SLOT, SLOT);
        jdbc.update("DELETE FROM once_relay_offset WHERE store_key = ?", SLOT);

        service(prefix).run(context -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            await().atMost(Duration.ofSeconds(90)).until(() -> skipped(meters) == 3);
            await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM outbox_event WHERE published_at IS NULL", Long.class) == 0);
        });

        assertThat(effects()).as("each handler took effect once per event").isEqualTo(3);
    }

    private static long effects() {
        return jdbc.queryForObject("SELECT count(*) FROM republish_effect", Long.class);
    }

    private static double skipped(MeterRegistry meters) {
        var counter = meters.find("once.dispatcher.skipped").tag("handler", "projection").counter();
        return counter == null ? 0 : counter.count();
    }
}
