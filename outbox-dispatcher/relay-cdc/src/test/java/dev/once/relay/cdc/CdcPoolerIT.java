package dev.once.relay.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.once.OnceConfigurationException;
import dev.once.autoconfigure.OnceRetentionAutoConfiguration;
import dev.once.autoconfigure.OnceSlotAutoConfiguration;
import dev.once.autoconfigure.OnceStoreAutoConfiguration;
import dev.once.idempotency.OnceMigrations;
import dev.once.outbox.OutboxEvent;
import dev.once.outbox.OutboxOperations;
import dev.once.outbox.OutboxWriter;
import dev.once.relay.autoconfigure.OnceRelayAutoConfiguration;
import dev.once.relay.cdc.autoconfigure.OnceCdcRelayAutoConfiguration;
import dev.once.retention.RetentionSweeper;
import dev.once.test.PgBouncer;
import dev.once.test.ReplicationCleanup;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.test.TestSigning;
import dev.once.wire.WireFormat;
import dev.once.wire.autoconfigure.OnceSigningAutoConfiguration;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A service whose DataSource goes through PgBouncer in transaction mode, the pooler docs/SCALING.md recommends: the
 * relay's replication connection and its leader's session lock need PostgreSQL itself, so without a direct connection
 * of its own the start stops with one message naming it; with one, the relay publishes, and the watermarks and the
 * retention sweep, whose locks are transaction locks, work through the pooler.
 */
class CdcPoolerIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    static PgBouncer bouncer;
    static HikariDataSource pooled;
    static String slot;

    @BeforeAll
    static void start() {
        OnceMigrations.migrate(db.dataSource());
        bouncer = PgBouncer.start(db.server(), db.schema());
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(bouncer.jdbcUrl());
        config.setUsername(db.server().username());
        config.setPassword(db.server().password());
        config.setMaximumPoolSize(6);
        pooled = new HikariDataSource(config);
        slot = ("pooled_" + db.schema()).toLowerCase();
    }

    @AfterAll
    static void stop() {
        if (pooled != null) {
            pooled.close();
        }
        if (bouncer != null) {
            bouncer.close();
            ReplicationCleanup.drop(db.dataSource(), slot, slot);
        }
    }

    ApplicationContextRunner service(String prefix) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, OnceStoreAutoConfiguration.class,
                        OnceRelayAutoConfiguration.class, OnceCdcRelayAutoConfiguration.class,
                        OnceSigningAutoConfiguration.class, OnceRetentionAutoConfiguration.class,
                        OnceSlotAutoConfiguration.class))
                .withBean(DataSource.class, () -> new DelegatingDataSource(pooled)) // the context must not close the pool
                .withPropertyValues(TestSigning.PROPERTY, "spring.kafka.bootstrap-servers=" + TestKafka.bootstrapServers(),
                        "once.idempotency.migrate=false", "once.outbox.relay.topic-prefix=" + prefix,
                        "once.outbox.relay.cdc.slot-name=" + slot, "once.outbox.relay.cdc.heartbeat=500ms",
                        "once.outbox.relay.slot.watermark-interval=200ms", "once.retention.interval=200ms");
    }

    @Test
    void without_a_direct_connection_of_its_own_the_relay_stops_the_start_naming_the_setting() {
        service("nodirect").run(context -> {
            OnceConfigurationException error = CdcMisconfigurationIT.configurationError(context.getStartupFailure());
            assertThat(error).as("fails the start: " + context.getStartupFailure()).isNotNull();
            System.out.println("behind a pooler: " + error.getMessage());
            assertThat(error.getMessage()).contains("connection pooler", "SQLState 08P01",
                    "once.outbox.relay.cdc.connection.url");
        });
    }

    @Test
    void a_direct_connection_that_lists_several_hosts_stops_the_start_asking_for_the_primary_alone() {
        String hosts = db.server().jdbcUrl().replaceFirst("//([^/]+)/", "//$1,standby.invalid:5432/");
        service("hosts").withPropertyValues("once.outbox.relay.cdc.connection.url=" + hosts).run(context -> {
            OnceConfigurationException error = CdcMisconfigurationIT.configurationError(context.getStartupFailure());
            assertThat(error).as("fails the start: " + context.getStartupFailure()).isNotNull();
            assertThat(error.getMessage()).contains("names several hosts",
                    "Set once.outbox.relay.cdc.connection.url (with username and password) to the primary alone");
        });
    }

    @Test
    void with_its_direct_connection_it_publishes_and_rows_leave_the_outbox_through_the_pooler() {
        String prefix = "pool" + UUID.randomUUID().toString().substring(0, 6);
        TestKafka.createTopic(prefix + ".order", 2);
        service(prefix).withPropertyValues("once.outbox.relay.cdc.connection.url=" + db.server().jdbcUrl())
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    OutboxWriter writer = context.getBean(OutboxWriter.class);
                    TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(
                            context.getBean(DataSource.class)));
                    for (int i = 0; i < 200; i += 20) {
                        int from = i;
                        tx.executeWithoutResult(s -> {
                            for (int n = from; n < from + 20; n++) {
                                writer.append(OutboxEvent.builder().tenantId("acme").actorId("alice")
                                        .aggregate("order", "o-" + (n % 7)).type("OrderPlaced", 1)
                                        .payloadJson("{\"n\":" + n + "}").build());
                            }
                        });
                    }

                    assertThat(TestKafka.distinctHeaders(TestKafka.bootstrapServers(), prefix + ".order",
                            WireFormat.EVENT_ID, 200)).hasSize(200);
                    OutboxOperations outbox = context.getBean(OutboxOperations.class);
                    await().atMost(Duration.ofSeconds(60)).until(() -> outbox.pending() == 0);
                    assertThat(context.getBean(RetentionSweeper.class).sweep()).containsKey("outbox_event");
                    assertThat(context.getBean(RetentionSweeper.class).status())
                            .allSatisfy(table -> assertThat(table.failure()).isNull());
                    assertThat(context.getBean("onceOutboxSlotHealthIndicator", HealthIndicator.class).health()
                            .getStatus()).isEqualTo(Status.UP);
                });
    }
}
