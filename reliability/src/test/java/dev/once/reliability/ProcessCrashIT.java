package dev.once.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.example.demo.DemoReport;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Scenarios 1 and 2: the service JVM (guard, relay and handlers in one process; once with the CDC relay, once with
 * the polling relay) is killed with {@code kill -9} twice, at points chosen by the load itself, while clients send guarded requests and retry on timeouts and errors, and is
 * started again. Once the leases lapse, the clients' retries finish. Nothing acknowledged may be lost, nothing may
 * take effect twice, and no outbox row may exist without its business row (or the reverse).
 */
class ProcessCrashIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(2);

    @TempDir
    static Path dataDir;

    @ParameterizedTest(name = "{0} relay")
    @ValueSource(strings = {"cdc", "polling"})
    void kill_minus_9_of_the_service_while_serving_and_relaying_loses_nothing_and_does_nothing_twice(String relayMode) {
        try (Deployment deployment = new Deployment(Deployment.Database.of(db, relayMode), dataDir.resolve(relayMode),
                relayMode, TestKafka.bootstrapServers())) {
            ServiceProcess service = deployment.instance("a").start();
            JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
            CompletableFuture<DemoReport> load = Scenario.load(List.of(service.uri()), 4, 30, 11);

            int kills = 0;
            long before = Scenario.claimed(jdbc);
            for (long threshold : new long[] {before + 25, before + 70}) {
                // kill at a point the load reaches, not after a guessed pause: once this many keys were claimed
                await().atMost(Duration.ofSeconds(120)).until(() -> load.isDone() || Scenario.claimed(jdbc) >= threshold);
                if (load.isDone()) {
                    break;
                }
                service.kill();
                kills++;
                service.start();
            }
            DemoReport report = load.join();
            TopicCensus.Count kafka = TopicCensus.of(TestKafka.bootstrapServers(), List.of(
                    deployment.topicPrefix() + ".account", deployment.topicPrefix() + ".task"));

            Summary.record(new Summary.Row("1+2 kill -9 of the service (guard, " + relayMode + " relay, handlers)",
                    report.operations(), kills, report.lost() + report.halfWritten(), report.duplicates(), report.passed(),
                    "requests " + report.requests() + "; " + kafka.duplicates() + " duplicate deliveries on Kafka absorbed by "
                            + "the claims; LEASED re-sends absorbed " + report.absorbedAttempts()));
            assertThat(kills).isEqualTo(2);
            assertThat(kafka.distinctEvents()).isPositive();
            Scenario.assertExactlyOnce(report);
        }
    }
}
