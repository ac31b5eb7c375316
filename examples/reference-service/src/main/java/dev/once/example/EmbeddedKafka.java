package dev.once.example;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * The embedded default's Kafka: Kafka's own KRaft server (broker and controller in one, as {@code kafka-server-start}
 * runs it), in this JVM, with its log under {@code <data-dir>/kafka} and fixed ports. A restart, graceful or
 * {@code kill -9}, finds its topics, its records and its consumer groups' offsets where it left them; the log is
 * formatted only the first time. A single broker: replication factor 1, records flushed as Kafka's defaults say (the
 * page cache; a machine crash, not a process crash, can lose the last of them).
 */
final class EmbeddedKafka implements AutoCloseable {

    private final KafkaRaftServer server;
    private final String bootstrapServers;

    private EmbeddedKafka(KafkaRaftServer server, String bootstrapServers) {
        this.server = server;
        this.bootstrapServers = bootstrapServers;
    }

    /**
     * Starts the broker on {@code port} (clients) and {@code controllerPort} (its own quorum), keeping its log in
     * {@code logDirectory}.
     */
    static EmbeddedKafka start(Path logDirectory, int port, int controllerPort) throws Exception {
        Files.createDirectories(logDirectory);
        Properties config = new Properties();
        config.put("process.roles", "broker,controller");
        config.put("node.id", "1");
        config.put("controller.quorum.voters", "1@localhost:" + controllerPort);
        config.put("listeners", "PLAINTEXT://localhost:" + port + ",CONTROLLER://localhost:" + controllerPort);
        config.put("advertised.listeners", "PLAINTEXT://localhost:" + port);
        config.put("controller.listener.names", "CONTROLLER");
        config.put("inter.broker.listener.name", "PLAINTEXT");
        config.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        config.put("log.dirs", logDirectory.toString());
        config.put("auto.create.topics.enable", "false");
        config.put("group.initial.rebalance.delay.ms", "0");
        config.put("offsets.topic.replication.factor", "1");
        config.put("offsets.topic.num.partitions", "5");
        config.put("transaction.state.log.replication.factor", "1");
        config.put("transaction.state.log.min.isr", "1");
        config.put("share.coordinator.state.topic.replication.factor", "1");
        config.put("share.coordinator.state.topic.min.isr", "1");
        KafkaConfig kafka = KafkaConfig.fromProps(config);
        if (!Files.exists(logDirectory.resolve("meta.properties"))) { // a log kept from an earlier run is used as it is
            ByteArrayOutputStream formatting = new ByteArrayOutputStream();
            new Formatter()
                    .setPrintStream(new PrintStream(formatting, true, StandardCharsets.UTF_8))
                    .setClusterId(Uuid.randomUuid().toString())
                    .setNodeId(kafka.nodeId())
                    .setControllerListenerName("CONTROLLER")
                    .setMetadataLogDirectory(kafka.metadataLogDir())
                    .setDirectories(List.of(logDirectory.toString()))
                    .setReleaseVersion(MetadataVersion.latestProduction())
                    .run();
        }
        KafkaRaftServer server = new KafkaRaftServer(kafka, Time.SYSTEM);
        server.startup();
        return new EmbeddedKafka(server, "localhost:" + port);
    }

    String bootstrapServers() {
        return bootstrapServers;
    }

    @Override
    public void close() {
        server.shutdown();
        server.awaitShutdown();
    }
}
