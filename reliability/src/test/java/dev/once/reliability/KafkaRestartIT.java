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
 * Scenario 3: Kafka fails under the relay and the handlers. A single broker is killed mid-load and, once events have
 * piled up in the outbox behind it, started again; then a three-broker cluster (replication factor 3,
 * {@code min.insync.replicas=2}) loses one broker for good. Requests keep being accepted throughout (the outbox
 * decouples them from Kafka), and every event reaches every handler exactly once.
 */
@ExtendWith(SummaryWatcher.class)
class KafkaRestartIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(2);

    @TempDir
    Path dir;

    @Test
    void a_broker_killed_and_restarted_during_relay_and_dispatch_loses_no_event() {
        try (KafkaCluster kafka = new KafkaCluster(dir.resolve("kafka"), 1);
             Deployment deployment = new Deployment(Deployment.Database.of(db, "one"), dir.resolve("data"), "cdc",
                     kafka.bootstrapServers(), 1)) {
            ServiceProcess service = deployment.instance("a").start();
            JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
            CompletableFuture<DemoReport> load = Scenario.load(List.of(service.uri()), 4, 40, 41);
            await().atMost(Duration.ofSeconds(120)).until(() -> load.isDone() || Scenario.claimed(jdbc) >= 40);
            kafka.node(1).kill();
            long claimedAtKill = Scenario.claimed(jdbc);
            // requests go on while the broker is down; the relay keeps their events in the outbox
            await().atMost(Duration.ofSeconds(120)).until(() -> load.isDone() || Scenario.claimed(jdbc) >= claimedAtKill + 30);
            long pendingWhileDown = pending(jdbc);
            kafka.node(1).start();
            kafka.awaitBrokers(1);
            DemoReport report = load.join();

            Summary.record(new Summary.Row("3 Kafka broker killed and restarted", report.operations(), 1,
                    report.lost() + report.halfWritten(), report.duplicates(), report.passed(),
                    pendingWhileDown + " events waited in the outbox; re-sends absorbed " + report.absorbedAttempts()));
            assertThat(pendingWhileDown).isPositive();
            Scenario.assertExactlyOnce(report);
        }
    }

    @Test
    void a_three_broker_cluster_losing_one_broker_loses_no_event() {
        try (KafkaCluster kafka = new KafkaCluster(dir.resolve("kafka3"), 3);
             Deployment deployment = new Deployment(Deployment.Database.of(db, "three"), dir.resolve("data3"), "cdc",
                     kafka.bootstrapServers(), 3)) {
            ServiceProcess service = deployment.instance("a").start();
            JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
            CompletableFuture<DemoReport> load = Scenario.load(List.of(service.uri()), 4, 40, 43);
            await().atMost(Duration.ofSeconds(120)).until(() -> load.isDone() || Scenario.claimed(jdbc) >= 60);
            kafka.node(2).kill(); // for good: two in-sync replicas remain, min.insync.replicas=2 still holds
            DemoReport report = load.join();

            Summary.record(new Summary.Row("3 Kafka 3 brokers (RF 3, min ISR 2), one killed", report.operations(), 1,
                    report.lost() + report.halfWritten(), report.duplicates(), report.passed(),
                    "acks=all kept working on 2 of 3; re-sends absorbed " + report.absorbedAttempts()));
            Scenario.assertExactlyOnce(report);
        }
    }

    static long pending(JdbcTemplate jdbc) {
        return jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE published_at IS NULL", Long.class);
    }
}
