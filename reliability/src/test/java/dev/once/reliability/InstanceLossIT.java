package dev.once.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.example.demo.DemoReport;
import dev.once.test.TestDatabase;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Scenario 6: two instances behind a (client-side, round-robin) balancer. The one leading the CDC relay is killed
 * with {@code kill -9} mid-load and stays dead. The standby takes the relay over from the stored offsets, and the
 * clients, retrying on the surviving instance, finish.
 */
@ExtendWith(SummaryWatcher.class)
class InstanceLossIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(2);

    @TempDir
    static Path dataDir;

    @Test
    void losing_the_instance_that_leads_the_relay_loses_nothing_and_the_standby_takes_over() {
        try (Deployment deployment = new Deployment(db, dataDir, "cdc")) {
            ServiceProcess a = deployment.instance("a").start();
            ServiceProcess b = deployment.instance("b").start();
            await().atMost(Duration.ofSeconds(60)).until(() -> "RUNNING".equals(a.relayState())
                    || "RUNNING".equals(b.relayState()));
            ServiceProcess leader = "RUNNING".equals(a.relayState()) ? a : b;
            ServiceProcess standby = leader == a ? b : a;
            assertThat(standby.relayState()).isEqualTo("STANDBY");

            JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
            CompletableFuture<DemoReport> load = Scenario.load(List.of(a.uri(), b.uri()), 4, 40, 23);
            await().atMost(Duration.ofSeconds(120)).until(() -> Scenario.claimed(jdbc) >= 50);
            leader.kill();
            await("the standby leads").atMost(Duration.ofSeconds(60)).until(() -> "RUNNING".equals(standby.relayState()));
            DemoReport report = load.join();

            Summary.record(new Summary.Row("6 lose the CDC leader of two instances", report.operations(), 1,
                    report.lost() + report.halfWritten(), report.duplicates(), report.passed(),
                    "standby took over; requests " + report.requests() + ", re-sends absorbed " + report.absorbedAttempts()));
            assertThat(leader.alive()).isFalse();
            Scenario.assertExactlyOnce(report);
        }
    }
}
