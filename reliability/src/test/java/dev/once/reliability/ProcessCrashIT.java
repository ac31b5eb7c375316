package dev.once.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.example.demo.Demo;
import dev.once.example.demo.DemoReport;
import dev.once.test.TestDatabase;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Scenarios 1 and 2: the service JVM (guard, CDC relay and handlers in one process) is killed with {@code kill -9}
 * at points chosen by the load itself, while clients send guarded requests and retry on timeouts and errors, and is
 * started again. Once the leases lapse, the clients' retries finish. Nothing acknowledged may be lost, nothing may
 * take effect twice, and no outbox row may exist without its business row (or the reverse).
 */
class ProcessCrashIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(2);

    @TempDir
    static Path dataDir;

    @Test
    void kill_minus_9_of_the_service_while_serving_and_relaying_loses_nothing_and_does_nothing_twice() {
        try (Deployment deployment = new Deployment(db, dataDir, "cdc")) {
            ServiceProcess service = deployment.instance("a").start();
            JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
            Demo.Settings settings = Demo.Settings.against(List.of(service.uri())).withLoad(4, 40).withSeed(11)
                    .withPatience(Duration.ofSeconds(120));
            CompletableFuture<DemoReport> load = CompletableFuture.supplyAsync(() -> Demo.run(settings));

            int kills = 0;
            for (long threshold : new long[] {30, 70, 110}) {
                // kill at a point the load reaches, not after a guessed pause: once this many keys were claimed
                await().atMost(Duration.ofSeconds(120)).until(() -> load.isDone() || claimed(jdbc) >= threshold);
                if (load.isDone()) {
                    break;
                }
                service.kill();
                kills++;
                service.start();
            }
            DemoReport report = load.join();

            Summary.record(new Summary.Row("1+2 kill -9 of service (guard, CDC relay, handlers)", report.operations(),
                    kills, report.lost() + report.halfWritten(), report.duplicates(), report.passed(),
                    "requests " + report.requests() + ", timeouts/errors retried " + report.timeouts()
                            + ", re-sends absorbed " + report.absorbedAttempts()));
            assertThat(kills).isEqualTo(3);
            assertThat(report.failures()).isEmpty();
            assertThat(report.lost()).isZero();
            assertThat(report.duplicates()).isZero();
            assertThat(report.halfWritten()).isZero();
        }
    }

    static long claimed(JdbcTemplate jdbc) {
        return jdbc.queryForObject("SELECT count(*) FROM idempotency_record WHERE route LIKE 'POST %'", Long.class);
    }
}
