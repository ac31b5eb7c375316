package dev.once.relay.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.OnceConfigurationException;
import dev.once.autoconfigure.OnceExternalRelayAutoConfiguration;
import dev.once.autoconfigure.OnceRetentionAutoConfiguration;
import dev.once.autoconfigure.OnceSlotAutoConfiguration;
import dev.once.autoconfigure.OnceStoreAutoConfiguration;
import dev.once.idempotency.OnceMigrations;
import dev.once.outbox.OutboxOperations;
import dev.once.spi.SlotWatermarks;
import dev.once.relay.EventTransport;
import dev.once.relay.OutboxRelay;
import dev.once.relay.PollingRelay;
import dev.once.relay.TopicRouter;
import dev.once.retention.RetentionRule;
import dev.once.retention.RetentionSweeper;
import dev.once.test.SecuredKafka;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.test.TestSigning;
import dev.once.wire.autoconfigure.OnceSigningAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;

/** The Boot autoconfiguration runs the chosen relay, with metrics and health, and backs off when disabled. */
class OnceRelayAutoConfigurationIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(6);

    @BeforeAll
    static void migrate() {
        OnceMigrations.migrate(db.dataSource());
    }

    private ApplicationContextRunner runner(String prefix) {
        DataSource shared = new DelegatingDataSource(db.dataSource());
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, OnceStoreAutoConfiguration.class,
                        OnceRelayAutoConfiguration.class, OnceSigningAutoConfiguration.class))
                .withPropertyValues(TestSigning.PROPERTY)
                .withBean(DataSource.class, () -> shared)
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues("once.outbox.relay.mode=polling", "once.outbox.relay.topic-prefix=" + prefix,
                        "spring.kafka.bootstrap-servers=" + TestKafka.bootstrapServers());
    }

    @Test
    void the_polling_relay_runs_with_metrics_and_health() {
        String prefix = "auto" + UUID.randomUUID().toString().substring(0, 6);
        TestKafka.createTopic(prefix + ".order", 1);
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version, payload)
                SELECT gen_random_uuid(), 'acme', 'alice', 'order', 'o-' || n, 'OrderPlaced', 1, convert_to('{}', 'UTF8')
                FROM generate_series(1, 20) AS n
                """);

        runner(prefix).run(context -> {
            assertThat(context).hasSingleBean(OutboxRelay.class);
            assertThat(context.getBean(OutboxRelay.class)).isInstanceOf(PollingRelay.class);
            await().atMost(Duration.ofSeconds(30)).until(() -> context.getBean(OutboxOperations.class).pending() == 0);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            assertThat(meters.get("once.outbox.published").counter().count()).isEqualTo(20);
            assertThat(meters.get("once.outbox.pending").gauge().value()).isZero();
            assertThat(meters.get("once.outbox.publish.latency").timer().count()).isEqualTo(20);
            HealthIndicator health = context.getBean("onceOutboxRelayHealthIndicator", HealthIndicator.class);
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);
            assertThat(health.health().getDetails()).containsEntry("state", "RUNNING")
                    .containsEntry("signing", "require, signing with key " + TestSigning.KEY_ID + ", verifying keys "
                            + TestSigning.KEY_ID);
            assertThat(health.health().toString()).doesNotContain(TestSigning.SECRET);
        });
    }

    @Test
    void without_a_signing_key_or_an_explicit_mode_off_startup_stops_with_one_message_naming_both() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, OnceStoreAutoConfiguration.class,
                        OnceRelayAutoConfiguration.class, OnceSigningAutoConfiguration.class))
                .withBean(DataSource.class, () -> new DelegatingDataSource(db.dataSource()))
                .withPropertyValues("once.outbox.relay.mode=polling")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("once.outbox.signing.keys.<id>")
                        .hasMessageContaining("once.outbox.signing.mode=off"));
    }

    @Test
    void rows_kept_by_the_outbox_retention_are_deleted_by_the_services_retention_sweep_once_it_has_passed() {
        String prefix = "ret" + UUID.randomUUID().toString().substring(0, 6);
        TestKafka.createTopic(prefix + ".order", 1);
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version, payload)
                SELECT gen_random_uuid(), 'acme', 'alice', 'order', 'kept-' || n, 'OrderPlaced', 1, convert_to('{}', 'UTF8')
                FROM generate_series(1, 5) AS n
                """);

        runner(prefix).withConfiguration(AutoConfigurations.of(OnceRetentionAutoConfiguration.class))
                .withPropertyValues("once.outbox.relay.retention=3s", "once.retention.interval=200ms").run(context -> {
                    assertThat(context.getBean(RetentionSweeper.class).rules()).extracting(RetentionRule::table)
                            .containsExactly("idempotency_record", "outbox_event");
                    await().atMost(Duration.ofSeconds(30)).until(() -> published(jdbc, "kept-%") == 5);
                    assertThat(rows(jdbc, "kept-%")).as("kept for the retention").isEqualTo(5);
                    await().atMost(Duration.ofSeconds(30)).until(() -> rows(jdbc, "kept-%") == 0);
                    MeterRegistry meters = context.getBean(MeterRegistry.class);
                    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(meters.find("once.retention.swept")
                            .tag("table", "outbox_event").counter()).isNotNull().extracting(c -> c.count()).isEqualTo(5.0));
                });
    }

    /**
     * With Kafka Connect relaying the outbox, nothing in the service knows what it published but the connector's slot:
     * while that slot does not exist (the connector starts after the service), rows far older than the retention stay,
     * the slot's health says why, and a missing slot name stops the start with the fix.
     */
    @Test
    void with_an_external_relay_no_relay_runs_here_and_no_row_leaves_the_outbox_while_the_connectors_slot_is_missing() {
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version,
                                          payload, created_at)
                SELECT gen_random_uuid(), 'acme', 'alice', 'order', 'aged-' || n, 'OrderPlaced', 1,
                       convert_to('{}', 'UTF8'), now() - interval '2 hours'
                FROM generate_series(1, 4) AS n
                """);
        ApplicationContextRunner external = runner("ext").withConfiguration(AutoConfigurations.of(
                        OnceRetentionAutoConfiguration.class, OnceExternalRelayAutoConfiguration.class,
                        OnceSlotAutoConfiguration.class))
                .withPropertyValues("once.outbox.relay.mode=external", "once.outbox.relay.retention=1h");

        try {
            externalRelay(external, jdbc);
        } finally {
            jdbc.update("DELETE FROM outbox_event WHERE aggregate_id LIKE 'aged-%'");
        }
    }

    private static void externalRelay(ApplicationContextRunner external, JdbcTemplate jdbc) {
        external.run(context -> assertThat(context).getFailure().rootCause()
                .isInstanceOf(OnceConfigurationException.class)
                .hasMessageContaining("Set once.outbox.relay.external.slot-name to the slot.name of the Debezium connector"));

        String slot = "not_created_yet_" + UUID.randomUUID().toString().substring(0, 6);
        external.withPropertyValues("once.outbox.relay.external.slot-name=" + slot).run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(OutboxRelay.class).doesNotHaveBean(EventTransport.class);
            SlotWatermarks watermarks = context.getBean(SlotWatermarks.class);
            assertThat(watermarks.round()).as("no watermark without a slot").isEqualTo(new SlotWatermarks.Round(false, 0, 0));
            assertThat(context.getBean(RetentionSweeper.class).sweep()).containsEntry("outbox_event", 0L);
            assertThat(rows(jdbc, "aged-%")).as("appended two hours ago, retention one hour: kept, unconfirmed").isEqualTo(4);
            var health = context.getBean("onceOutboxSlotHealthIndicator", HealthIndicator.class).health();
            assertThat(health.getStatus()).isEqualTo(Status.DOWN);
            assertThat(health.getDetails()).containsEntry("state", "MISSING");
            assertThat(String.valueOf(health.getDetails().get("reason"))).contains("replication slot " + slot
                    + " does not exist", "the Debezium connector whose slot.name is " + slot);
        });
    }

    private static long published(JdbcTemplate jdbc, String aggregates) {
        return jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE aggregate_id LIKE ? AND published_at IS NOT NULL",
                Long.class, aggregates);
    }

    private static long rows(JdbcTemplate jdbc, String aggregates) {
        return jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE aggregate_id LIKE ?", Long.class, aggregates);
    }

    @Test
    void a_topic_template_routes_events_by_property_and_a_topic_router_bean_replaces_it() throws Exception {
        String prefix = "tpl" + UUID.randomUUID().toString().substring(0, 6);
        TestKafka.createTopic(prefix + ".order.OrderPlaced", 1);
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version, payload)
                VALUES (gen_random_uuid(), 'acme', 'alice', 'order', 'o-1', 'OrderPlaced', 1, convert_to('{}', 'UTF8'))
                """);

        runner(prefix).withPropertyValues("once.outbox.relay.topic-template=" + prefix + ".{aggregate_type}.{event_type}")
                .run(context -> await().atMost(Duration.ofSeconds(30))
                        .until(() -> context.getBean(OutboxOperations.class).pending() == 0));
        assertThat(endOffset(prefix + ".order.OrderPlaced")).isEqualTo(1);

        runner(prefix).withBean(TopicRouter.class, () -> message -> "custom")
                .run(context -> assertThat(context.getBean(TopicRouter.class).topicFor(null)).isEqualTo("custom"));
    }

    @Test
    void the_cdc_relay_asked_for_without_its_module_stops_startup_with_the_fix() {
        runner("cdc").withPropertyValues("once.outbox.relay.mode=cdc").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(OnceConfigurationException.class)
                    .hasMessageContaining("once-outbox-relay-cdc").hasMessageContaining("once.outbox.relay.mode=polling");
        });
    }

    @Test
    void the_relay_publishes_over_sasl_with_credentials_in_spring_kafka_only() {
        String prefix = "sasl" + UUID.randomUUID().toString().substring(0, 6);
        SecuredKafka.createTopic(prefix + ".order", 1);
        insertOrders(prefix, 5);

        securedRunner(prefix, SecuredKafka.springSasl(SecuredKafka.USER, SecuredKafka.PASSWORD)).run(context -> {
            await().atMost(Duration.ofSeconds(30)).until(() -> pendingOf(prefix) == 0);
            assertThat(keysOn(prefix + ".order", 5)).containsExactlyInAnyOrder(orderIds(prefix, 5));
            assertThat(context.getBean("onceOutboxRelayHealthIndicator", HealthIndicator.class).health().getStatus())
                    .isEqualTo(Status.UP);
        });
    }

    @Test
    void without_the_cdc_module_the_default_relay_is_the_polling_relay() {
        runner("default").withPropertyValues("once.outbox.relay.mode=").run(context ->
                assertThat(context.getBean(OutboxRelay.class)).isInstanceOf(PollingRelay.class));
    }

    @Test
    void the_relay_publishes_over_tls_trusting_the_broker_through_spring_kafka_ssl_only() {
        String prefix = "tls" + UUID.randomUUID().toString().substring(0, 6);
        SecuredKafka.createTopic(prefix + ".order", 1);
        insertOrders(prefix, 5);

        securedRunner(prefix, SecuredKafka.springTls()).run(context -> {
            await().atMost(Duration.ofSeconds(30)).until(() -> pendingOf(prefix) == 0);
            assertThat(keysOn(prefix + ".order", 5)).containsExactlyInAnyOrder(orderIds(prefix, 5));
        });
    }

    @Test
    void the_relay_publishes_over_tls_trusting_the_broker_through_a_spring_ssl_bundle() {
        String prefix = "bundle" + UUID.randomUUID().toString().substring(0, 6);
        SecuredKafka.createTopic(prefix + ".order", 1);
        insertOrders(prefix, 3);

        securedRunner(prefix, SecuredKafka.springTlsBundle("kafka"))
                .withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class)).run(context -> {
                    await().atMost(Duration.ofSeconds(30)).until(() -> pendingOf(prefix) == 0);
                    assertThat(keysOn(prefix + ".order", 3)).containsExactlyInAnyOrder(orderIds(prefix, 3));
                });
    }

    /** A relay whose Kafka settings are {@code kafka} alone: no bootstrap address of the plain test broker. */
    private ApplicationContextRunner securedRunner(String prefix, List<String> kafka) {
        DataSource shared = new DelegatingDataSource(db.dataSource());
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, OnceStoreAutoConfiguration.class,
                        OnceRelayAutoConfiguration.class, OnceSigningAutoConfiguration.class))
                .withPropertyValues(TestSigning.PROPERTY)
                .withBean(DataSource.class, () -> shared)
                .withPropertyValues("once.outbox.relay.mode=polling", "once.outbox.relay.topic-prefix=" + prefix)
                .withPropertyValues(kafka.toArray(String[]::new));
    }

    /** Orders {@code <prefix>-1..n}, each its own aggregate, tagged with the prefix so tests tell theirs apart. */
    private static void insertOrders(String prefix, int count) {
        new JdbcTemplate(db.dataSource()).update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version, payload)
                SELECT gen_random_uuid(), 'acme', 'alice', 'order', ? || '-' || n, 'OrderPlaced', 1, convert_to('{}', 'UTF8')
                FROM generate_series(1, ?) AS n
                """, prefix, count);
    }

    private static String[] orderIds(String prefix, int count) {
        return java.util.stream.IntStream.rangeClosed(1, count).mapToObj(n -> prefix + "-" + n).toArray(String[]::new);
    }

    private static long pendingOf(String prefix) {
        return new JdbcTemplate(db.dataSource()).queryForObject(
                "SELECT count(*) FROM outbox_event WHERE aggregate_id LIKE ? AND published_at IS NULL", Long.class,
                prefix + "-%");
    }

    /** The keys of the first {@code count} records on {@code topic}, read as the relay's user over SASL. */
    private static List<String> keysOn(String topic, int count) {
        Map<String, Object> config = new HashMap<>(SecuredKafka.saslClientProperties(SecuredKafka.USER, SecuredKafka.PASSWORD));
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "check-" + UUID.randomUUID());
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<String> keys = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(topic));
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                consumer.poll(Duration.ofMillis(200)).forEach(record -> keys.add(record.key()));
                return keys.size() >= count;
            });
        }
        return keys;
    }

    @Test
    void can_be_switched_off() {
        runner("off").withPropertyValues("once.outbox.relay.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(OutboxRelay.class));
    }

    private static long endOffset(String topic) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers()))) {
            TopicPartition partition = new TopicPartition(topic, 0);
            return admin.listOffsets(Map.of(partition, OffsetSpec.latest())).partitionResult(partition).get().offset();
        }
    }
}
