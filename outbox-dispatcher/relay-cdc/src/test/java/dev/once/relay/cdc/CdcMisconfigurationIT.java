package dev.once.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.OnceConfigurationException;
import dev.once.autoconfigure.OnceStoreAutoConfiguration;
import dev.once.idempotency.OnceMigrations;
import dev.once.relay.KafkaTransport;
import dev.once.relay.OutboxRelay.RelayState;
import dev.once.relay.OutboxRelay;
import dev.once.relay.RelayListener;
import dev.once.relay.RelayOptions;
import dev.once.relay.TopicRouter;
import dev.once.relay.autoconfigure.OnceRelayAutoConfiguration;
import dev.once.relay.cdc.autoconfigure.OnceCdcRelayAutoConfiguration;
import dev.once.test.TestKafka;
import dev.once.test.TestPostgres;
import dev.once.test.TestSigning;
import dev.once.wire.RecordSigning;
import dev.once.wire.autoconfigure.OnceSigningAutoConfiguration;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * The CDC relay, misconfigured as operators misconfigure it, in a Spring Boot application: each case gets one message
 * that names the fix, logged once and then at most once a minute without a stack trace, while the relay retries with
 * its health DOWN and the reason; a lasting misconfiguration fails the start unless {@code fail-fast=false}. And what
 * used to be one: two services on one cluster, each with the slot named after its database, and the upgrade of a
 * {@code once_outbox} slot. PostgreSQL servers of the test's own (zonky), since roles, databases and server settings
 * are what is under test; the shared Kafka broker.
 */
class CdcMisconfigurationIT {

    /** Trusted: the embedded servers let every local connection in, so no role here has a password. */
    static final String NO_PASSWORD = "";
    static final String SUPERUSER = "postgres";
    static final String PENDING = "SELECT count(*) FROM outbox_event WHERE published_at IS NULL AND parked_at IS NULL";
    static final String SLOT_DATABASES = "SELECT slot_name, database FROM pg_replication_slots";

    /** wal_level=replica: logical decoding is off. */
    static TestPostgres.Embedded replica;
    /** wal_level=logical with room for the slots the tests take. */
    static TestPostgres.Embedded cluster;
    /** One replication slot in all. */
    static TestPostgres.Embedded oneSlot;

    @BeforeAll
    static void startServers() {
        replica = TestPostgres.startEmbedded(Map.of("wal_level", "replica"));
        cluster = TestPostgres.startEmbedded(Map.of("max_replication_slots", "10", "max_wal_senders", "10"));
        oneSlot = TestPostgres.startEmbedded(Map.of("max_replication_slots", "1", "max_wal_senders", "2"));
    }

    @AfterAll
    static void stopServers() {
        for (TestPostgres.Embedded server : new TestPostgres.Embedded[] {replica, cluster, oneSlot}) {
            if (server != null) {
                server.close(); // with its roles, databases and slots
            }
        }
    }

    /**
     * A misconfiguration as a service meets it: the server, database and role it runs with, its properties, the
     * phrases its message must have (the problem and the fix), and whether it fails the start.
     */
    record Case(String name, TestPostgres.Embedded server, String database, String user, List<String> properties,
                boolean failsStart, String... says) {
    }

    @Test
    void each_misconfiguration_gets_one_message_naming_the_fix_logged_at_most_once_a_minute_with_health_down() {
        String onReplica = database(replica, "walrep");

        String noReplication = database(cluster, "norepl");
        String plainRole = role(cluster, noReplication, "NOREPLICATION");

        String noPublication = database(cluster, "nopub");
        String ownsNothing = role(cluster, noPublication, "REPLICATION");

        String elsewhere = database(cluster, "elsewhere");
        String here = database(cluster, "here");
        String foreignSlot = "foreign_" + suffix();
        sql(cluster, elsewhere).queryForList("SELECT pg_create_logical_replication_slot(?, 'pgoutput')", foreignSlot);

        String crowded = database(oneSlot, "crowded");
        String takenSlot = "taken_" + suffix();
        sql(oneSlot, SUPERUSER).queryForList("SELECT pg_create_logical_replication_slot(?, 'pgoutput')", takenSlot);

        List<Case> cases = List.of(
                new Case("wal_level = replica", replica, onReplica, SUPERUSER, List.of(), true,
                        "runs with wal_level = replica", "needs wal_level = logical",
                        "Set wal_level = logical", "restart PostgreSQL", "once.outbox.relay.mode=polling"),
                new Case("a role without REPLICATION", cluster, noReplication, plainRole, List.of(), true,
                        "The role " + plainRole + " that the CDC relay connects as has neither REPLICATION nor SUPERUSER",
                        "ALTER ROLE " + plainRole + " REPLICATION;"),
                new Case("a publication the role may not create", cluster, noPublication, ownsNothing, List.of(), true,
                        "The role " + ownsNothing + " may not create the publication " + slotOf(noPublication),
                        "SQLState 42501", "CREATE PUBLICATION " + slotOf(noPublication)
                        + " FOR TABLE public.outbox_event", "WITH (publish = 'insert')",
                        "GRANT CREATE ON DATABASE " + noPublication + " TO " + ownsNothing + ";"),
                new Case("a configured slot of another database", cluster, here, SUPERUSER,
                        List.of("once.outbox.relay.cdc.slot-name=" + foreignSlot), true,
                        "Replication slot " + foreignSlot + " belongs to database " + elsewhere + ", not " + here,
                        "set once.outbox.relay.cdc.slot-name to a name of this service's own", slotOf(here)),
                new Case("max_replication_slots taken", oneSlot, crowded, SUPERUSER, List.of(), false,
                        "Replication slot " + slotOf(crowded) + " does not exist and cannot be created",
                        "max_replication_slots = 1, and 1 slot exists (" + takenSlot + " (database postgres, inactive))",
                        "Raise max_replication_slots", "pg_drop_replication_slot"));

        SoftAssertions softly = new SoftAssertions();
        for (Case bad : cases) {
            if (bad.failsStart()) {
                startFails(bad, softly);
            }
            retriesWithHealthDown(bad, softly);
        }
        softly.assertAll();
    }

    /** With the defaults, a lasting misconfiguration fails the start with its message, which the relay does not log. */
    private static void startFails(Case bad, SoftAssertions softly) {
        try (Captured log = new Captured()) {
            service(bad.server(), bad.database(), bad.user(), RelayListener.NONE)
                    .withPropertyValues(bad.properties().toArray(String[]::new)).run(context -> {
                OnceConfigurationException error = configurationError(context.getStartupFailure());
                softly.assertThat(error).as(bad.name() + ": the start fails with a OnceConfigurationException, not "
                        + context.getStartupFailure()).isNotNull();
                if (error != null) {
                    System.out.printf("%s: %s%n", bad.name(), error.getMessage());
                    softly.assertThat(error.getMessage()).as(bad.name()).contains(bad.says());
                }
                softly.assertThat(log.reports()).as(bad.name() + ": logged by the relay besides").isEmpty();
            });
        }
    }

    /**
     * Kept running (fail-fast off, or a problem that may pass), the relay retries: its state is FAILED and its health
     * DOWN with the message, and it logged the message once, without a stack trace, however often it tried.
     */
    private static void retriesWithHealthDown(Case bad, SoftAssertions softly) {
        Failures failures = new Failures();
        List<String> properties = new ArrayList<>(bad.properties());
        if (bad.failsStart()) {
            properties.add("once.outbox.relay.cdc.fail-fast=false");
        }
        try (Captured log = new Captured()) {
            service(bad.server(), bad.database(), bad.user(), failures)
                    .withPropertyValues(properties.toArray(String[]::new)).run(context -> {
                softly.assertThat(context.getStartupFailure()).as(bad.name() + ": starts, retrying").isNull();
                if (context.getStartupFailure() != null) {
                    return;
                }
                // a second attempt, one retryFirst (1 s) after the first: retrying, not yet allowed to log again
                await().atMost(Duration.ofSeconds(20)).until(() -> failures.count() >= 2);
                RelayState state = context.getBean(OutboxRelay.class).state();
                Health health = context.getBean("onceOutboxRelayHealthIndicator", HealthIndicator.class).health();
                List<ILoggingEvent> reports = log.reports();

                softly.assertThat(state.status()).as(bad.name()).isEqualTo(RelayState.Status.FAILED);
                softly.assertThat(state.detail()).as(bad.name()).contains(bad.says());
                softly.assertThat(health.getStatus()).as(bad.name()).isEqualTo(Status.DOWN);
                softly.assertThat(health.getDetails()).as(bad.name()).containsEntry("state", "FAILED");
                softly.assertThat(String.valueOf(health.getDetails().get("detail"))).as(bad.name()).contains(bad.says());
                softly.assertThat(reports).as(bad.name() + ": reported once in " + failures.count() + " attempts")
                        .hasSize(1);
                softly.assertThat(reports).as(bad.name() + ": without a stack trace")
                        .allSatisfy(r -> assertThat(r.getThrowableProxy()).isNull())
                        .allSatisfy(r -> assertThat(r.getFormattedMessage()).contains(bad.says()));
            });
        }
    }

    @Test
    void an_engine_failure_the_preflight_does_not_foresee_is_summarised_by_its_cause_once_with_its_stack_trace() {
        String database = database(cluster, "wrongplugin");
        // a slot made by hand with another output plugin: Debezium, not the preflight, refuses it
        sql(cluster, database).queryForList("SELECT pg_create_logical_replication_slot(?, 'test_decoding')",
                slotOf(database));
        Failures failures = new Failures();
        try (Captured log = new Captured()) {
            service(cluster, database, SUPERUSER, failures).run(context -> {
                assertThat(context).as("an unforeseen failure may pass: the start does not fail").hasNotFailed();
                await().atMost(Duration.ofSeconds(60)).until(() -> failures.count() >= 2);
                String summary = "The CDC engine of slot " + slotOf(database) + " stopped: ";
                Health health = context.getBean("onceOutboxRelayHealthIndicator", HealthIndicator.class).health();
                System.out.println("engine failure: " + health.getDetails().get("detail"));

                assertThat(health.getStatus()).isEqualTo(Status.DOWN);
                assertThat(String.valueOf(health.getDetails().get("detail"))).startsWith(summary);
                List<ILoggingEvent> reports = log.reports();
                assertThat(reports).as("reported once in " + failures.count() + " attempts").hasSize(1);
                assertThat(reports.get(0).getLevel()).isEqualTo(Level.ERROR);
                assertThat(reports.get(0).getFormattedMessage()).contains(summary);
                assertThat(reports.get(0).getThrowableProxy()).as("the first report's stack trace").isNotNull();
            });
        }
    }

    @Test
    void two_services_with_default_settings_on_one_cluster_each_relay_through_a_slot_named_after_their_database() {
        String orders = database(cluster, "orders");
        String billing = database(cluster, "billing");
        TestKafka.createTopic(orders + ".order", 1);
        TestKafka.createTopic(billing + ".order", 1);
        commitEvents(cluster, orders, 20);
        commitEvents(cluster, billing, 30);

        service(cluster, orders, SUPERUSER, RelayListener.NONE).run(first -> service(cluster, billing, SUPERUSER,
                RelayListener.NONE).run(second -> {
            assertThat(first).hasNotFailed();
            assertThat(second).hasNotFailed();
            assertThat(first.getBean(CdcSettings.class).slotName()).isEqualTo(slotOf(orders));
            assertThat(second.getBean(CdcSettings.class).slotName()).isEqualTo(slotOf(billing));
            await().atMost(Duration.ofSeconds(60)).until(() -> pending(cluster, orders) == 0
                    && pending(cluster, billing) == 0);
            assertThat(published(orders + ".order")).isGreaterThanOrEqualTo(20);
            assertThat(published(billing + ".order")).isGreaterThanOrEqualTo(30);
            assertThat(slotDatabases(cluster)).containsEntry(slotOf(orders), orders)
                    .containsEntry(slotOf(billing), billing);

            // a second instance of a service stands by: UP, and it says so
            service(cluster, orders, SUPERUSER, RelayListener.NONE).run(standby -> {
                Health health = standby.getBean("onceOutboxRelayHealthIndicator", HealthIndicator.class).health();
                assertThat(health.getStatus()).isEqualTo(Status.UP);
                assertThat(health.getDetails()).containsEntry("state", "STANDBY")
                        .containsEntry("detail", "another instance leads " + slotOf(orders));
            });
        }));
    }

    @Test
    void an_existing_once_outbox_slot_of_a_database_is_kept_and_resumed_while_other_databases_get_their_own() {
        String legacy = database(cluster, "legacy");
        String fresh = database(cluster, "fresh");
        TestKafka.createTopic(legacy + ".order", 1);
        String slot = "once_outbox";
        // an earlier version, whose every service used the slot and publication once_outbox
        CdcSettings earlier = CdcSettings.of(cluster.jdbcUrl(legacy), SUPERUSER, NO_PASSWORD, "public")
                .withSlot(slot, slot);
        try (HikariDataSource pool = pool(cluster, legacy, SUPERUSER);
             KafkaTransport transport = new KafkaTransport(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                     TestKafka.bootstrapServers()), TopicRouter.byAggregateType(legacy), KafkaTransport.ACK_TIMEOUT, RecordSigning.off());
             CdcRelay before = new CdcRelay("before", pool, earlier, transport, RelayOptions.ofDefaults(),
                     RelayListener.NONE)) {
            before.start();
            commitEvents(cluster, legacy, 10);
            await().atMost(Duration.ofSeconds(60)).until(() -> pending(cluster, legacy) == 0);
        }
        commitEvents(cluster, legacy, 15); // while no relay runs

        service(cluster, legacy, SUPERUSER, RelayListener.NONE).run(upgraded -> {
            assertThat(upgraded).hasNotFailed();
            CdcSettings settings = upgraded.getBean(CdcSettings.class);
            assertThat(settings.slotName()).isEqualTo(slot);
            assertThat(settings.publicationName()).isEqualTo(slot);
            await().atMost(Duration.ofSeconds(60)).until(() -> pending(cluster, legacy) == 0);
            assertThat(published(legacy + ".order")).isGreaterThanOrEqualTo(25);
            assertThat(slotDatabases(cluster)).containsEntry(slot, legacy).doesNotContainKey(slotOf(legacy));
        });
        service(cluster, fresh, SUPERUSER, RelayListener.NONE).run(other -> {
            assertThat(other).hasNotFailed();
            assertThat(other.getBean(CdcSettings.class).slotName()).as("once_outbox belongs to " + legacy)
                    .isEqualTo(slotOf(fresh));
            assertThat(other.getBean(OutboxRelay.class).state().status()).isEqualTo(RelayState.Status.RUNNING);
        });
    }

    /** A service as a user runs it: Boot's Kafka, Once's store, the relay and the CDC relay autoconfigured. */
    static ApplicationContextRunner service(TestPostgres.Embedded server, String database, String user,
                                            RelayListener listener) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, OnceStoreAutoConfiguration.class,
                        OnceRelayAutoConfiguration.class, OnceCdcRelayAutoConfiguration.class,
                        OnceSigningAutoConfiguration.class))
                .withPropertyValues(TestSigning.PROPERTY)
                .withBean(DataSource.class, () -> pool(server, database, user))
                .withBean(RelayListener.class, () -> listener)
                .withPropertyValues("spring.kafka.bootstrap-servers=" + TestKafka.bootstrapServers(),
                        "once.idempotency.migrate=false", // migrated by the tables' owner, as a deployment step would
                        "once.outbox.relay.topic-prefix=" + database);
    }

    static HikariDataSource pool(TestPostgres.Embedded server, String database, String user) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(server.jdbcUrl(database));
        config.setUsername(user);
        config.setPassword(NO_PASSWORD);
        config.setMaximumPoolSize(4);
        config.setMinimumIdle(0);
        return new HikariDataSource(config);
    }

    /** A database of its own on {@code server}, with Once's tables, owned by the superuser. */
    static String database(TestPostgres.Embedded server, String prefix) {
        String name = prefix + "_" + suffix();
        sql(server, SUPERUSER).execute("CREATE DATABASE " + name);
        try (HikariDataSource owner = pool(server, name, SUPERUSER)) {
            OnceMigrations.migrate(owner);
        }
        return name;
    }

    /** A login role with {@code attributes} that may use the tables of {@code database}, and owns nothing. */
    static String role(TestPostgres.Embedded server, String database, String attributes) {
        String role = "relay_" + suffix();
        sql(server, SUPERUSER).execute("CREATE ROLE " + role + " LOGIN " + attributes);
        sql(server, database).execute("GRANT USAGE ON SCHEMA public TO " + role
                + "; GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO " + role
                + "; GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO " + role);
        return role;
    }

    static JdbcTemplate sql(TestPostgres.Embedded server, String database) {
        return new JdbcTemplate(new DriverManagerDataSource(server.jdbcUrl(database), SUPERUSER, NO_PASSWORD));
    }

    static String slotOf(String database) {
        return CdcSettings.slotNameFor(database, "public");
    }

    static String suffix() {
        return Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 20, 1 << 24));
    }

    static void commitEvents(TestPostgres.Embedded server, String database, int count) {
        sql(server, database).update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type,
                                          event_version, payload)
                SELECT gen_random_uuid(), 'acme', 'alice', 'order', 'o-' || n, 'OrderPlaced', 1,
                       convert_to(jsonb_build_object('n', n)::text, 'UTF8')
                FROM generate_series(1, ?) AS n
                """, count);
    }

    static long pending(TestPostgres.Embedded server, String database) {
        return sql(server, database).queryForObject(PENDING, Long.class);
    }

    static Map<String, String> slotDatabases(TestPostgres.Embedded server) {
        Map<String, String> slots = new java.util.HashMap<>();
        sql(server, SUPERUSER).query(SLOT_DATABASES, rs -> {
            slots.put(rs.getString(1), rs.getString(2));
        });
        return slots;
    }

    /** Records on {@code topic}: its end offsets, every partition's. */
    static long published(String topic) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(config, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(topic, p.partition())).toList();
            return consumer.endOffsets(partitions).values().stream().mapToLong(Long::longValue).sum();
        }
    }

    /** The {@link OnceConfigurationException} a failed start carries somewhere in its causes. */
    static OnceConfigurationException configurationError(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof OnceConfigurationException error) {
                return error;
            }
        }
        return null;
    }

    /** Counts the failures the relay reports: one per attempt that could not lead. */
    static final class Failures implements RelayListener {

        private final AtomicInteger failed = new AtomicInteger();

        @Override
        public void failed(Throwable failure) {
            failed.incrementAndGet();
        }

        int count() {
            return failed.get();
        }
    }

    /** What the relay logs at WARN and above while it is open. */
    static final class Captured implements AutoCloseable {

        private final Logger logger = (Logger) LoggerFactory.getLogger(CdcRelay.class);
        private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

        Captured() {
            appender.start();
            logger.addAppender(appender);
        }

        List<ILoggingEvent> reports() {
            synchronized (appender) { // the lock ListAppender appends under
                return appender.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN)).toList();
            }
        }

        @Override
        public void close() {
            logger.detachAppender(appender);
        }
    }
}
