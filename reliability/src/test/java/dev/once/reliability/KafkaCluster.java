package dev.once.reliability;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;

/**
 * Real Kafka brokers (KRaft, each node broker and controller) as separate JVMs the suite can {@code kill -9} and start
 * again on the same ports and log directories: the test's own broker can't be restarted from inside its JVM.
 * Internal topics and {@code min.insync.replicas} follow the cluster's size: 1 and 1 for one node, 3 and 2 for three.
 */
final class KafkaCluster implements AutoCloseable {

    /** One node: its ports, its directory and, while it runs, its process. */
    final class Node {
        final int id;
        final int port = Scenario.freePort();
        final int controllerPort = Scenario.freePort();
        final Path directory;
        Process process;
        int starts;

        Node(int id) {
            this.id = id;
            this.directory = root.resolve("node-" + id);
        }

        void start() {
            Path config = directory.resolve("server.properties");
            try {
                Files.createDirectories(directory);
                if (!Files.exists(config)) {
                    Files.writeString(config, properties(this));
                    run(List.of("kafka.tools.StorageTool", "format", "-t", clusterId, "-c", config.toString()),
                            directory.resolve("format.log"));
                }
                Path log = directory.resolve("broker-" + (++starts) + ".log");
                process = java(List.of("kafka.Kafka", config.toString())).redirectErrorStream(true)
                        .redirectOutput(log.toFile()).start();
            } catch (IOException e) {
                throw new UncheckedIOException("Could not start broker " + id, e);
            }
        }

        /** {@code kill -9}. */
        void kill() {
            process.destroyForcibly();
            try {
                process.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private final Path root;
    private final String clusterId = Uuid.randomUuid().toString();
    private final List<Node> nodes = new ArrayList<>();

    KafkaCluster(Path root, int size) {
        this.root = root;
        for (int id = 1; id <= size; id++) {
            nodes.add(new Node(id));
        }
        nodes.forEach(Node::start);
        awaitBrokers(size);
    }

    Node node(int id) {
        return nodes.get(id - 1);
    }

    int size() {
        return nodes.size();
    }

    String bootstrapServers() {
        return nodes.stream().map(n -> "localhost:" + n.port).collect(Collectors.joining(","));
    }

    /** Waits until {@code count} brokers are registered and serving. */
    void awaitBrokers(int count) {
        Properties config = new Properties();
        config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 5_000);
        try (Admin admin = Admin.create(config)) {
            await("Kafka brokers up").atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500))
                    .ignoreExceptions()
                    .until(() -> admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).size() >= count);
        }
    }

    private String properties(Node node) {
        int replicas = nodes.size();
        int minIsr = replicas >= 3 ? 2 : 1;
        String voters = nodes.stream().map(n -> n.id + "@localhost:" + n.controllerPort).collect(Collectors.joining(","));
        return String.join("\n",
                "process.roles=broker,controller",
                "node.id=" + node.id,
                "controller.quorum.voters=" + voters,
                "listeners=PLAINTEXT://localhost:" + node.port + ",CONTROLLER://localhost:" + node.controllerPort,
                "advertised.listeners=PLAINTEXT://localhost:" + node.port,
                "controller.listener.names=CONTROLLER",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "inter.broker.listener.name=PLAINTEXT",
                "log.dirs=" + node.directory.resolve("logs"),
                "num.partitions=3",
                "default.replication.factor=" + replicas,
                "min.insync.replicas=" + minIsr,
                "offsets.topic.replication.factor=" + replicas,
                "transaction.state.log.replication.factor=" + replicas,
                "transaction.state.log.min.isr=" + minIsr,
                "group.initial.rebalance.delay.ms=0",
                "auto.create.topics.enable=false",
                "unclean.leader.election.enable=false",
                "") ;
    }

    private static void run(List<String> mainAndArgs, Path log) throws IOException {
        Process process = java(mainAndArgs).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            if (!process.waitFor(120, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException(mainAndArgs + " failed; see " + log);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static ProcessBuilder java(List<String> mainAndArgs) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx384m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path")));
        command.addAll(mainAndArgs);
        return new ProcessBuilder(command);
    }

    @Override
    public void close() {
        for (Node node : nodes) {
            if (node.process != null && node.process.isAlive()) {
                node.kill();
            }
        }
    }
}
