package dev.once.example;

import dev.once.test.ReplicationCleanup;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Reference service instances for a test class: each a whole Spring Boot application on a random port, all sharing
 * the class's database schema, one Kafka broker, one topic prefix, one consumer group and one CDC slot, as several
 * instances of one deployment do.
 */
final class ServiceInstances implements AutoCloseable {

    private final TestDatabase db;
    private final Path dataDir;
    private final String name;
    private final List<ConfigurableApplicationContext> running = new ArrayList<>();

    ServiceInstances(TestDatabase db, Path dataDir) {
        this.db = db;
        this.dataDir = dataDir;
        this.name = ("ref_" + db.schema()).toLowerCase();
    }

    ConfigurableApplicationContext start() {
        return start(List.of("spring.kafka.bootstrap-servers=" + TestKafka.bootstrapServers()));
    }

    /**
     * An instance whose Kafka connection is {@code settings} ({@code key=value}, e.g. {@code spring.kafka.*}), and
     * whatever else it should run with.
     */
    ConfigurableApplicationContext start(List<String> settings) {
        return start(settings, Map.of());
    }

    /** An instance as {@link #start(List)} makes it, with {@code beans} (by name) added to its context. */
    ConfigurableApplicationContext start(List<String> settings, Map<String, Object> beans) {
        List<String> arguments = new ArrayList<>(List.of(
                "--server.port=0",
                "--spring.jmx.enabled=false",
                "--spring.datasource.url=" + db.jdbcUrl(),
                "--spring.datasource.username=" + db.server().username(),
                "--spring.datasource.password=" + db.server().password(),
                "--once.reference.data-dir=" + dataDir,
                "--once.reference.topic-partitions=3",
                "--once.outbox.relay.topic-prefix=" + name,
                "--once.outbox.relay.cdc.slot-name=" + name,
                "--once.outbox.relay.cdc.publication-name=" + name,
                "--once.outbox.relay.cdc.leader-poll=500ms",
                "--once.dispatcher.group-id=" + name));
        settings.forEach(setting -> arguments.add("--" + setting));
        // command-line arguments: they outrank application.yaml, as a deployment's settings do
        ConfigurableApplicationContext context = new SpringApplicationBuilder(ReferenceServiceApplication.class)
                .initializers(c -> beans.forEach(c.getBeanFactory()::registerSingleton))
                .run(arguments.toArray(String[]::new));
        running.add(context);
        return context;
    }

    /** The topic prefix the instances' relay publishes under: {@code <prefix>.account}, {@code <prefix>.file}, ... */
    String topicPrefix() {
        return name;
    }

    static URI baseOf(ConfigurableApplicationContext context) {
        return URI.create("http://127.0.0.1:" + ((WebServerApplicationContext) context).getWebServer().getPort());
    }

    @Override
    public void close() {
        running.forEach(ConfigurableApplicationContext::close);
        running.clear();
        ReplicationCleanup.drop(db.dataSource(), name, name);
    }
}
