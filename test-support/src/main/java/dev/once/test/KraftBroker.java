package dev.once.test;

import java.util.Map;
import kafka.server.BrokerServer;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.apache.kafka.common.utils.Exit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one in-process KRaft broker of a test JVM (a combined broker and controller, through Kafka's own
 * {@link KafkaClusterTestKit}, which spring-kafka's {@code EmbeddedKafkaKraftBroker} wraps too), with three client
 * listeners: the test kit's own PLAINTEXT listener (which the broker also uses for itself), a SASL_PLAINTEXT listener
 * taking PLAIN, and an SSL listener. spring-kafka's broker cannot be used: overriding its {@code listeners} loses its
 * bootstrap address. Authorization is on ({@code StandardAuthorizer}) with no ACL for anyone but super users, so that
 * an authenticated principal without grants meets the authorization errors real clusters give; the PLAINTEXT and SSL
 * listeners' ANONYMOUS principal and the SASL user {@link #USER} are super users.
 */
final class KraftBroker {

    static final String USER = "once";
    static final String PASSWORD = "once-secret";
    /** Authenticates, and is granted nothing. */
    static final String STRANGER = "stranger";
    static final String STRANGER_PASSWORD = "stranger-secret";

    private static final String SASL = "SASL";
    private static final String TLS = "TLS";
    private static final Logger log = LoggerFactory.getLogger(KraftBroker.class);
    private static volatile KraftBroker started;

    private final KafkaClusterTestKit cluster;
    private final TestCertificates certificates;

    private KraftBroker(KafkaClusterTestKit cluster, TestCertificates certificates) {
        this.cluster = cluster;
        this.certificates = certificates;
    }

    /** The broker, started on first use; it stops with the JVM. Thread-safe. */
    static KraftBroker get() {
        KraftBroker found = started;
        if (found == null) {
            synchronized (KraftBroker.class) {
                found = started;
                if (found == null) {
                    found = start();
                    started = found;
                }
            }
        }
        return found;
    }

    private static KraftBroker start() {
        long begin = System.nanoTime();
        TestCertificates certificates = TestCertificates.generate();
        // a broker that meets a fatal error calls Exit, which would end the test JVM with it
        Exit.setExitProcedure((status, message) -> log.warn("Embedded Kafka asked to exit({}): {}", status, message));
        Exit.setHaltProcedure((status, message) -> log.warn("Embedded Kafka asked to halt({}): {}", status, message));
        try {
            TestKitNodes nodes = new TestKitNodes.Builder().setCombined(true).setNumBrokerNodes(1)
                    .setNumControllerNodes(1).build();
            String plain = nodes.brokerListenerName().value();
            String controller = nodes.controllerListenerName().value();
            KafkaClusterTestKit.Builder builder = new KafkaClusterTestKit.Builder(nodes);
            Map<String, String> config = new java.util.LinkedHashMap<>();
            // the test kit binds its own two listeners ahead (its voters and bootstrap address rely on them); the
            // other two bind where they are told
            config.put("listeners", plain + "://localhost:0," + controller + "://localhost:0,"
                    + SASL + "://127.0.0.1:0," + TLS + "://127.0.0.1:0");
            config.put("listener.security.protocol.map", plain + ":PLAINTEXT," + controller + ":PLAINTEXT,"
                    + SASL + ":SASL_PLAINTEXT," + TLS + ":SSL");
            config.put("inter.broker.listener.name", plain);
            String sasl = "listener.name." + SASL.toLowerCase() + ".";
            config.put(sasl + "sasl.enabled.mechanisms", "PLAIN");
            config.put(sasl + "plain.sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required "
                    + "user_" + USER + "=\"" + PASSWORD + "\" user_" + STRANGER + "=\"" + STRANGER_PASSWORD + "\";");
            String tls = "listener.name." + TLS.toLowerCase() + ".";
            config.put(tls + "ssl.keystore.location", certificates.keyStore().toString());
            config.put(tls + "ssl.keystore.password", certificates.password());
            config.put(tls + "ssl.key.password", certificates.password());
            config.put(tls + "ssl.keystore.type", "PKCS12");
            config.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
            config.put("allow.everyone.if.no.acl.found", "false");
            config.put("super.users", "User:ANONYMOUS;User:" + USER);
            // as production clusters are set up: a topic exists only when created
            config.put("auto.create.topics.enable", "false");
            config.put("delete.topic.enable", "true");
            config.put("num.partitions", "1");
            config.put("log.flush.interval.messages", "1000000");
            config.put("group.initial.rebalance.delay.ms", "0");
            config.put("offsets.topic.replication.factor", "1");
            config.put("transaction.state.log.replication.factor", "1");
            config.put("transaction.state.log.min.isr", "1");
            config.forEach(builder::setConfigProp);
            KafkaClusterTestKit cluster = builder.build();
            cluster.format();
            cluster.startup();
            cluster.waitForReadyBrokers();
            KraftBroker broker = new KraftBroker(cluster, certificates);
            Runtime.getRuntime().addShutdownHook(new Thread(broker::stop, "embedded-kafka-stop"));
            log.info("Embedded Kafka (KRaft) started in {} ms: PLAINTEXT {}, SASL_PLAINTEXT {}, SSL {}",
                    (System.nanoTime() - begin) / 1_000_000, broker.plaintextBootstrap(), broker.saslBootstrap(),
                    broker.tlsBootstrap());
            return broker;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("Could not start the embedded Kafka broker", e);
        }
    }

    String plaintextBootstrap() {
        return cluster.bootstrapServers();
    }

    String saslBootstrap() {
        return "127.0.0.1:" + broker().boundPort(ListenerName.normalised(SASL));
    }

    String tlsBootstrap() {
        return "127.0.0.1:" + broker().boundPort(ListenerName.normalised(TLS));
    }

    TestCertificates certificates() {
        return certificates;
    }

    private BrokerServer broker() {
        return cluster.brokers().values().iterator().next();
    }

    private void stop() {
        try {
            cluster.close();
        } catch (Exception e) {
            log.debug("Embedded Kafka did not stop cleanly", e);
        }
    }
}
