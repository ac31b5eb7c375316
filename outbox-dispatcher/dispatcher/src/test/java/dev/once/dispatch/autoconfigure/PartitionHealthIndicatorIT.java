package dev.once.dispatch.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.idempotency.ClaimPartitions;
import dev.once.idempotency.OnceMigrations;
import dev.once.test.TestDatabase;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.LocalDate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.jdbc.core.JdbcTemplate;

/** Health and metrics say when the claims' partitions are not kept: something that should work and does not. */
class PartitionHealthIndicatorIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create();

    @Test
    void up_with_the_days_ahead_then_down_naming_the_day_that_could_not_be_created() {
        OnceMigrations.migrate(db.dataSource());
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ClaimPartitions partitions = ClaimPartitions.create(db.dataSource(), ClaimPartitions.Options.ofDefaults(),
                new PartitionMetrics(registry));
        PartitionHealthIndicator health = new PartitionHealthIndicator(partitions);
        assertThat(health.health().getStatus()).as("before the first round").isEqualTo(Status.UNKNOWN);

        partitions.maintain();

        Health up = health.health();
        assertThat(up.getStatus()).isEqualTo(Status.UP);
        assertThat(up.getDetails()).containsEntry("days-ahead", ClaimPartitions.DAYS_AHEAD);
        assertThat(registry.get("once.claims.partitions.days.ahead").gauge().value()).isEqualTo(ClaimPartitions.DAYS_AHEAD);
        assertThat(registry.get("once.claims.partitions.created").tag("trigger", "ahead").counter().count())
                .isEqualTo(ClaimPartitions.DAYS_AHEAD + 1);

        // the next day ahead is blocked by a table of that name that is no partition of the claims
        int today = jdbc.queryForObject("SELECT CAST(EXTRACT(EPOCH FROM statement_timestamp()) * 1000 AS bigint) / 86400000",
                Integer.class);
        int next = today + ClaimPartitions.DAYS_AHEAD + 1;
        jdbc.execute("CREATE TABLE once_handler_claim_" + LocalDate.ofEpochDay(next).toString().replace("-", "") + " (x int)");
        ClaimPartitions further = ClaimPartitions.create(db.dataSource(),
                new ClaimPartitions.Options(ClaimPartitions.RETENTION, ClaimPartitions.DAYS_AHEAD + 1, ClaimPartitions.INTERVAL),
                new PartitionMetrics(registry));

        assertThatThrownBy(further::maintain).hasMessageContaining("once_handler_claim_");
        Health down = new PartitionHealthIndicator(further).health();
        assertThat(down.getStatus()).isEqualTo(Status.DOWN);
        assertThat(String.valueOf(down.getDetails().get("reason"))).contains("the last round failed")
                .contains("once_handler_claim_" + LocalDate.ofEpochDay(next).toString().replace("-", ""));
        assertThat(registry.get("once.claims.partitions.failures").counter().count()).isOne();
    }
}
