package dev.once.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.example.demo.Demo;
import dev.once.example.demo.DemoReport;
import dev.once.idempotency.OnceMigrations;
import dev.once.test.TestDatabase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.flywaydb.core.Flyway;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The upgrade harness: a rolling deploy of the reference service from one version to the next, under traffic, with
 * the next version's migrations applied while every instance still runs the previous version. It proves what
 * UPGRADING.md's rule promises of a migration: old and new instances serve side by side on the migrated schema, and
 * no request fails, nothing is lost and nothing takes effect twice on the way.
 *
 * <ol>
 *   <li>The previous version's instances start; the first creates the previous version's schema at its start, as
 *       that version does by default.</li>
 *   <li>Traffic: the demo's clients against every instance, retrying as clients do. The harness waits until the
 *       database is populated (claims, outbox rows, handled events) before anything changes.</li>
 *   <li>The <em>expand</em> migrations run as a deployment step, while every instance is still the previous
 *       version.</li>
 *   <li>The instances roll one by one: each is stopped with SIGTERM, as a deploy stops it, and started on the next
 *       version (with {@code once.idempotency.migrate=false}: the step above migrated), and requests are served by the
 *       mixed deployment before the next one goes.</li>
 *   <li>The <em>contract</em> migrations run once no instance of the previous version is left.</li>
 *   <li>The verdict: the demo's (every request answered as the contract says, nothing lost, nothing done twice,
 *       nothing half-written) and no ERROR line in any instance's log.</li>
 * </ol>
 *
 * <p>The next version is this build's reference service and migrations (Once's, plus the test's expand and contract
 * locations). The previous one is {@code -Donce.upgrade.previous-jar=<runnable jar>}, built from the release tag;
 * without it, this build's jar stands in, and only the migrations between the two differ.
 */
final class RollingUpgrade {

    /** What the run did: the traffic's rounds, the migrations applied at each step, and the ERROR lines logged. */
    record Result(List<DemoReport> rounds, List<String> expanded, List<String> contracted, List<String> errors) {
    }

    private final TestDatabase db;
    private final Path dataDir;
    private final Path previousJar;
    private final Path nextJar;
    private final List<String> expand;
    private final List<String> contract;
    private int instances = 2;

    private RollingUpgrade(TestDatabase db, Path dataDir, List<String> expand, List<String> contract) {
        this.db = db;
        this.dataDir = dataDir;
        this.nextJar = ServiceProcess.serviceJar();
        String previous = System.getProperty("once.upgrade.previous-jar", "");
        this.previousJar = previous.isBlank() ? nextJar : Path.of(previous);
        this.expand = expand;
        this.contract = contract;
    }

    /**
     * A rolling upgrade of the deployment in {@code db}'s schema, applying the migrations of {@code expand} (Flyway
     * locations, besides Once's own) before the roll and those of {@code contract} after it.
     */
    static RollingUpgrade of(TestDatabase db, Path dataDir, List<String> expand, List<String> contract) {
        return new RollingUpgrade(db, dataDir, expand, contract);
    }

    RollingUpgrade instances(int count) {
        this.instances = count;
        return this;
    }

    Result run() {
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        try (Deployment deployment = new Deployment(db, dataDir, "cdc")) {
            List<ServiceProcess> running = new ArrayList<>();
            for (int i = 0; i < instances; i++) {
                running.add(deployment.instance(Character.toString('a' + i)).withJar(previousJar).start());
            }
            Traffic traffic = new Traffic(running.stream().map(ServiceProcess::uri).toList());
            awaitTraffic(jdbc, 40, "a populated database");
            await("events handled before the upgrade").atMost(Duration.ofSeconds(120)).until(() -> handled(jdbc) > 0);

            List<String> expanded = migrate(List.of(OnceMigrations.LOCATION), expand);
            awaitTraffic(jdbc, 10, "requests served by the previous version on the expanded schema");
            deployment.property("once.idempotency.migrate", "false");
            for (ServiceProcess instance : running) {
                instance.stop();
                instance.withJar(nextJar).start();
                awaitTraffic(jdbc, 10, "requests served after " + instance.name() + " rolled");
            }
            List<String> contracted = migrate(Stream.concat(Stream.of(OnceMigrations.LOCATION), expand.stream())
                    .toList(), contract);
            awaitTraffic(jdbc, 10, "requests served by the next version on the contracted schema");
            List<DemoReport> rounds = traffic.stop();
            List<String> errors = running.stream().flatMap(instance -> errors(instance).stream()).toList();
            return new Result(rounds, expanded, contracted, errors);
        }
    }

    /**
     * The demo's clients, round after round, against every instance until stopped: each round's requests are retried
     * for up to two minutes, long enough to outlive an instance's restart, and each round checks its own effects.
     */
    private static final class Traffic {
        private final AtomicBoolean going = new AtomicBoolean(true);
        private final CompletableFuture<List<DemoReport>> rounds;

        Traffic(List<URI> targets) {
            rounds = CompletableFuture.supplyAsync(() -> {
                List<DemoReport> done = new ArrayList<>();
                for (long seed = 41; going.get(); seed++) {
                    done.add(Demo.run(Demo.Settings.against(targets).withLoad(4, 15).withSeed(seed)
                            .withPatience(Duration.ofSeconds(120))));
                }
                return done;
            });
        }

        /** Lets the round under way finish, and returns every round. */
        List<DemoReport> stop() {
            going.set(false);
            return rounds.join();
        }
    }

    /**
     * Applies the migrations of {@code locations} (after those already applied from {@code before}); a migration that
     * waits longer than two minutes fails the run instead of hanging it.
     */
    private List<String> migrate(List<String> before, List<String> locations) {
        String[] all = Stream.concat(before.stream(), locations.stream()).toArray(String[]::new);
        CompletableFuture<List<String>> applied = CompletableFuture.supplyAsync(() -> Flyway.configure()
                .configuration(OnceMigrations.FLYWAY_SETTINGS).dataSource(db.dataSource()).locations(all)
                .table(OnceMigrations.HISTORY_TABLE).load().migrate().migrations.stream()
                .map(m -> m.version + " " + m.description).toList());
        try {
            return applied.get(2, TimeUnit.MINUTES);
        } catch (TimeoutException e) {
            throw new AssertionError("The migrations of " + locations + " did not finish in 2 minutes while the "
                    + "instances served: one of them waits (a lock, or CREATE INDEX CONCURRENTLY behind a transaction "
                    + "that stays open)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("The migrations of " + locations + " failed: " + e.getCause(), e.getCause());
        }
    }

    /**
     * How long the traffic may claim nothing and still be well. A round retries a request for up to its patience
     * (2 minutes); after its requests it waits up to its settle time (2 minutes) for the outbox and the handlers to be
     * quiet, and the next round waits so again before its first request. A round that meets a restart (a lease to
     * lapse, the consumer group to rebalance) may pause the claims for all three: 6 minutes, and a minute to spare.
     */
    static final Duration TRAFFIC_PAUSE = Duration.ofMinutes(7);

    /** Waits until {@code more} guarded requests beyond the current count were claimed. */
    private static void awaitTraffic(JdbcTemplate jdbc, int more, String what) {
        long from = Scenario.claimed(jdbc);
        await(what).atMost(TRAFFIC_PAUSE).until(() -> Scenario.claimed(jdbc) >= from + more);
    }

    private static long handled(JdbcTemplate jdbc) {
        return jdbc.queryForObject("SELECT count(*) FROM once_handler_claim", Long.class);
    }

    /**
     * ERROR lines that a graceful stop of the CDC leader logs, which are not the upgrade's: Debezium's asynchronous
     * engine, closed while a batch is being converted, reports the rejected conversion as its failure (the batch is
     * not acknowledged, so the next leader publishes it again, and consumers skip it by event id).
     */
    static final List<String> STOPPING = List.of("i.d.embedded.async.AsyncEmbeddedEngine   : Engine has failed with");

    /** The lines an instance logged at ERROR, over every start of it, but those of {@link #STOPPING}. */
    private static List<String> errors(ServiceProcess instance) {
        try (Stream<Path> logs = Files.list(instance.log().getParent())) {
            return logs.filter(log -> log.getFileName().toString().startsWith(instance.name() + "-"))
                    .flatMap(RollingUpgrade::lines).filter(line -> line.contains(" ERROR "))
                    .filter(line -> STOPPING.stream().noneMatch(line::contains)).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Stream<String> lines(Path log) {
        try {
            return Files.readAllLines(log).stream();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The verdict every run must meet. */
    static void assertSafe(Result result) {
        assertThat(result.rounds()).isNotEmpty().allSatisfy(Scenario::assertExactlyOnce);
        assertThat(result.errors()).as("ERROR lines in the instances' logs").isEmpty();
    }
}
