package dev.once.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.example.demo.Demo;
import dev.once.example.demo.DemoReport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.springframework.jdbc.core.JdbcTemplate;

/** What the fault scenarios share: the load, the measure of its progress, the verdict, and free ports. */
final class Scenario {

    private Scenario() {
    }

    /**
     * The demo's clients in the background against {@code targets}: {@code clients} clients times {@code perClient}
     * logical requests, each retried for up to two minutes (long enough to outlive a restart and a lease).
     */
    static CompletableFuture<DemoReport> load(List<URI> targets, int clients, int perClient, long seed) {
        Demo.Settings settings = Demo.Settings.against(targets).withLoad(clients, perClient).withSeed(seed)
                .withPatience(Duration.ofSeconds(120));
        return CompletableFuture.supplyAsync(() -> Demo.run(settings));
    }

    /** Guarded requests claimed so far (every deployment of a test class shares its schema): the faults' trigger. */
    static long claimed(JdbcTemplate jdbc) {
        return jdbc.queryForObject("SELECT count(*) FROM idempotency_record WHERE route LIKE 'POST %'", Long.class);
    }

    /** Nothing lost, nothing done twice, nothing half-written, and every other invariant of the demo held. */
    static void assertExactlyOnce(DemoReport report) {
        assertThat(report.failures()).isEmpty();
        assertThat(report.lost()).isZero();
        assertThat(report.duplicates()).isZero();
        assertThat(report.halfWritten()).isZero();
    }

    static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
