package dev.once.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.example.demo.DemoReport;
import dev.once.test.TestKafka;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Scenario 4: PostgreSQL restarts, twice, while the service serves guarded requests, relays and dispatches. Requests
 * that meet the outage get 503 and are retried; the CDC relay resumes from its stored offsets, the polling relay
 * resumes, and the handlers retry instead of dead-lettering: nothing is lost, nothing happens twice.
 */
@ExtendWith(SummaryWatcher.class)
class PostgresRestartIT {

    static final String PENDING = "SELECT count(*) FROM outbox_event WHERE published_at IS NULL AND parked_at IS NULL";

    @TempDir
    Path dir;

    @ParameterizedTest(name = "relay {0}")
    @ValueSource(strings = {"cdc", "polling"})
    void restarting_postgres_during_relay_and_dispatch_loses_nothing(String relayMode) {
        try (ControlledPostgres postgres = new ControlledPostgres(dir.resolve("pg"));
             Deployment deployment = new Deployment(new Deployment.Database("pgrestart", postgres.jdbcUrl(), "postgres",
                     "", postgres.admin()), dir.resolve("data"), relayMode, TestKafka.bootstrapServers())) {
            ServiceProcess service = deployment.instance("a").start();
            JdbcTemplate jdbc = new JdbcTemplate(postgres.admin());
            CompletableFuture<DemoReport> load = Scenario.load(List.of(service.uri()), 4, 40, 31);
            for (long threshold : new long[] {40, 100}) {
                await().atMost(Duration.ofSeconds(120)).ignoreExceptions()
                        .until(() -> load.isDone() || Scenario.claimed(jdbc) >= threshold);
                if (load.isDone()) {
                    break;
                }
                postgres.restart();
            }
            DemoReport report = load.join();
            // The demo has waited (up to two minutes) for the outbox to empty: a row left pending would have had its
            // event published (the handlers saw every event) and never been confirmed as such, as the CDC relay's
            // former bookkeeping left some in about one run in ten (docs/RELIABILITY.md, "What the suite found").
            long pending = jdbc.queryForObject(PENDING, Long.class);

            Summary.record(new Summary.Row("4 PostgreSQL restarts, " + relayMode + " relay", report.operations(),
                    postgres.restarts(), report.lost() + report.halfWritten(), report.duplicates(), report.passed(),
                    "requests " + report.requests() + ", re-sends absorbed " + report.absorbedAttempts() + ", outbox rows left"
                            + " pending (published, never confirmed) " + pending));
            assertThat(postgres.restarts()).isEqualTo(2);
            Scenario.assertExactlyOnce(report);
            assertThat(pending).as("outbox rows left pending, their events published").isZero();
            assertThat(service.alive()).isTrue();
        }
    }
}
