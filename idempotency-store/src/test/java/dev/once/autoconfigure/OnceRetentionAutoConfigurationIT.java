package dev.once.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.OnceConfigurationException;
import dev.once.retention.RetentionRule;
import dev.once.retention.RetentionSweeper;
import dev.once.test.TestDatabase;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * The sweep inside a Boot service: on by default, swept rows and overdue age as metrics, health DOWN when it falls
 * behind, off with {@code once.retention.enabled=false}, and one clear error for a bad setting.
 */
class OnceRetentionAutoConfigurationIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(6);

    JdbcTemplate jdbc;

    @BeforeEach
    void empty() {
        jdbc = new JdbcTemplate(db.dataSource());
        dev.once.idempotency.OnceMigrations.migrate(db.dataSource());
        jdbc.update("DELETE FROM idempotency_record");
    }

    private ApplicationContextRunner runner() {
        DataSource shared = new DelegatingDataSource(db.dataSource());
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(OnceStoreAutoConfiguration.class, OnceRetentionAutoConfiguration.class))
                .withBean(DataSource.class, () -> shared)
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new);
    }

    @Test
    void a_service_sweeps_its_tables_by_itself_and_counts_what_it_swept() {
        dueRecords(4, "3 hours");

        runner().withPropertyValues("once.retention.interval=200ms").run(context -> {
            assertThat(context.getBean(RetentionSweeper.class).rules()).extracting(RetentionRule::table)
                    .containsExactly("idempotency_record");
            await().atMost(Duration.ofSeconds(20)).until(() -> count() == 0);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(meters.find("once.retention.swept")
                    .tag("table", "idempotency_record").counter()).isNotNull().extracting(c -> c.count()).isEqualTo(4.0));
            Gauge overdue = meters.get("once.retention.overdue").tag("table", "idempotency_record").gauge();
            assertThat(overdue.value()).isZero();
            assertThat(context.getBean("onceRetentionHealthIndicator", HealthIndicator.class).health().getStatus())
                    .isEqualTo(Status.UP);
        });
    }

    @Test
    void health_is_down_while_the_oldest_due_row_waits_longer_than_max_overdue() throws Exception {
        dueRecords(2, "3 hours"); // due for two hours past the one-hour grace
        try (Connection elsewhere = db.dataSource().getConnection()) {
            lockAsAnotherInstance(elsewhere);
            runner().withPropertyValues("once.retention.interval=200ms", "once.retention.max-overdue=30m").run(context -> {
                HealthIndicator health = context.getBean("onceRetentionHealthIndicator", HealthIndicator.class);
                await().atMost(Duration.ofSeconds(20)).until(() -> health.health().getStatus().equals(Status.DOWN));
                assertThat(String.valueOf(health.health().getDetails().get("reason")))
                        .contains("idempotency_record").contains("once.retention.max-overdue (1800 s)");
                MeterRegistry meters = context.getBean(MeterRegistry.class);
                assertThat(meters.get("once.retention.overdue").tag("table", "idempotency_record").gauge().value())
                        .isBetween(7100.0, 7300.0);
                assertThat(count()).as("the other instance's round is under way").isEqualTo(2);
            });
            elsewhere.createStatement().execute("SELECT pg_advisory_unlock_all()");
        }
    }

    @Test
    void switched_off_nothing_sweeps() {
        runner().withPropertyValues("once.retention.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(RetentionSweeper.class));
    }

    @Test
    void a_bad_setting_fails_startup_with_one_message_naming_the_property() {
        runner().withPropertyValues("once.retention.batch-size=0").run(context -> assertThat(context.getStartupFailure())
                .rootCause().isInstanceOf(OnceConfigurationException.class).hasMessageContaining("once.retention")
                .hasMessageContaining("batchSize must be at least 1"));
    }

    private void dueRecords(int n, String expiredAgo) {
        for (int i = 0; i < n; i++) {
            jdbc.update("INSERT INTO idempotency_record (tenant_id, user_id, route, idempotency_key, request_hash, status, "
                    + "response_code, expires_at) VALUES ('acme', 'alice', 'POST /accounts', ?, 'h', 'succeeded', 201, "
                    + "now() - CAST(? AS interval))", "k-" + i, expiredAgo);
        }
    }

    private long count() {
        return jdbc.queryForObject("SELECT count(*) FROM idempotency_record", Long.class);
    }

    private static void lockAsAnotherInstance(Connection connection) throws Exception {
        try (PreparedStatement lock = connection.prepareStatement(
                "SELECT pg_try_advisory_lock(" + 0x0CE0_0003 + ", hashtext(current_schema() || '.idempotency_record'))");
             ResultSet rs = lock.executeQuery()) {
            assertThat(rs.next() && rs.getBoolean(1)).isTrue();
        }
    }
}
