package dev.once.reliability;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.dispatch.DispatchListener;
import dev.once.dispatch.EventDispatcher;
import dev.once.dispatch.HandlerRegistration;
import dev.once.dispatch.KafkaEventDispatcher;
import dev.once.dispatch.Parking;
import dev.once.dispatch.ParkingPolicy;
import dev.once.dispatch.RetryPolicy;
import dev.once.dispatch.UnhandledPolicy;
import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.HandlerClaimStore;
import dev.once.wire.RecordSigning;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * A dispatcher with parking alone in a JVM of its own, for {@link DispatcherCrashIT} to kill with {@code kill -9}. Two
 * handlers take {@code OrderPlaced} v1: {@code projection} (TRANSACTIONAL) and {@code mailer} (LEASED), each writing
 * {@code crash_effect}. The mailer's dependency is down for the keys in {@code crash_dependency} with state
 * {@code down} (it throws), and hangs for those with state {@code hang} when the retrier runs them (it says
 * {@code STEP retrying} and never returns), so that the kill lands inside a retry. Arguments: {@code name=value} pairs
 * (url, user, password, schema, bootstrap, topic, group).
 */
public final class DispatcherProcess {

    private DispatcherProcess() {
    }

    public static void main(String[] args) {
        Map<String, String> a = ChildJvm.arguments(args);
        HikariDataSource dataSource = ChildJvm.pool(a, 6);
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        HandlerRegistration projection = HandlerRegistration.transactional("OrderPlaced", 1, "projection", event ->
                effect(jdbc, "projection", event.headers().get("test-key"), event.headers().get("test-n"), event.eventId()));
        HandlerRegistration mailer = HandlerRegistration.leased("OrderPlaced", 1, "mailer", event -> {
            String key = event.headers().get("test-key");
            List<String> state = jdbc.queryForList("SELECT state FROM crash_dependency WHERE record_key = ?",
                    String.class, key);
            if (state.contains("hang") && Thread.currentThread().getName().startsWith("once-parked-")) {
                System.out.println("STEP retrying " + key);
                System.out.flush();
                LockSupport.park(); // inside the call to the dependency, until killed
            }
            if (!state.isEmpty()) {
                throw new IllegalStateException("the mail service is unavailable for " + key);
            }
            effect(jdbc, "mailer", key, event.headers().get("test-n"), event.eventId());
        });
        HandlerClaimStore store = HandlerClaimStore.create(dataSource);
        EventDispatcher dispatcher = new EventDispatcher(store, new DataSourceTransactionManager(dataSource),
                List.of(projection, mailer), ClaimPolicy.custom().lease(Duration.ofSeconds(3)).ttl(Duration.ofDays(1))
                .build(), RecordSigning.off(), DispatchListener.NONE, ObservationRegistry.NOOP,
                UnhandledPolicy.ofDefaults());
        KafkaEventDispatcher consumers = new KafkaEventDispatcher(
                Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, a.get("bootstrap")),
                Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, a.get("bootstrap")), a.get("group"), dispatcher, 1,
                RetryPolicy.ofDefaults(), Parking.on(dataSource, new ParkingPolicy(Duration.ofMillis(200), 2.0,
                Duration.ofSeconds(1), Duration.ofMinutes(10))), null, a.get("topic"));
        consumers.start();
        System.out.println("STEP started");
        System.out.flush();
        LockSupport.park(); // until killed
    }

    private static void effect(JdbcTemplate jdbc, String handler, String key, String n, java.util.UUID eventId) {
        jdbc.update("INSERT INTO crash_effect (handler, record_key, n, event_id) VALUES (?, ?, ?, ?)", handler, key,
                Integer.parseInt(n), eventId);
    }
}
