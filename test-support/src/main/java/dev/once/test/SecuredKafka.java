package dev.once.test;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;

/**
 * A Kafka broker that needs authentication, for tests of how Once connects: the in-process KRaft broker of this JVM
 * (started on first use, shared by every test, the same one {@link TestKafka} falls back on) with a SASL_PLAINTEXT
 * listener taking PLAIN, and an SSL listener whose certificate, made for the run, only {@link #certificates() its
 * trust store} trusts. Two SASL users: {@link #USER}, allowed everything, and {@link #STRANGER}, who authenticates and
 * is granted nothing (authorization is on). Topics are created through the broker's PLAINTEXT listener
 * ({@link #createTopic}), which no test under test should use.
 *
 * <p>The {@code spring*} methods give the same connections as Spring Boot properties, {@code key=value}, for
 * {@code ApplicationContextRunner.withPropertyValues} or as {@code --key=value} arguments: tests of Once's
 * autoconfiguration say how to connect through {@code spring.kafka.*} only, as applications do.
 */
public final class SecuredKafka {

    public static final String USER = KraftBroker.USER;
    public static final String PASSWORD = KraftBroker.PASSWORD;
    public static final String STRANGER = KraftBroker.STRANGER;
    public static final String STRANGER_PASSWORD = KraftBroker.STRANGER_PASSWORD;

    private SecuredKafka() {
    }

    /** {@code host:port} of the SASL_PLAINTEXT listener (mechanism PLAIN). */
    public static String saslBootstrap() {
        return KraftBroker.get().saslBootstrap();
    }

    /** {@code host:port} of the SSL listener; its certificate is for {@code 127.0.0.1} and {@code localhost}. */
    public static String tlsBootstrap() {
        return KraftBroker.get().tlsBootstrap();
    }

    /** The broker's key store and the trust store a client needs, PKCS12, with their password. */
    public static TestCertificates certificates() {
        return KraftBroker.get().certificates();
    }

    /** Kafka client properties that connect to the SASL listener as {@code user}. */
    public static Map<String, Object> saslClientProperties(String user, String password) {
        return Map.of("bootstrap.servers", saslBootstrap(), "security.protocol", "SASL_PLAINTEXT",
                "sasl.mechanism", "PLAIN", "sasl.jaas.config", jaas(user, password));
    }

    /** Kafka client properties that connect to the SSL listener, trusting its certificate. */
    public static Map<String, Object> tlsClientProperties() {
        TestCertificates certificates = certificates();
        return Map.of("bootstrap.servers", tlsBootstrap(), "security.protocol", "SSL",
                "ssl.truststore.location", certificates.trustStore().toString(), "ssl.truststore.type", "PKCS12",
                "ssl.truststore.password", certificates.password());
    }

    /** Spring Boot properties that connect every client of the application to the SASL listener as {@code user}. */
    public static List<String> springSasl(String user, String password) {
        return List.of("spring.kafka.bootstrap-servers=" + saslBootstrap(),
                "spring.kafka.security.protocol=SASL_PLAINTEXT",
                "spring.kafka.properties.sasl.mechanism=PLAIN",
                "spring.kafka.properties.sasl.jaas.config=" + jaas(user, password));
    }

    /** Spring Boot properties that connect every client of the application to the SSL listener. */
    public static List<String> springTls() {
        TestCertificates certificates = certificates();
        return List.of("spring.kafka.bootstrap-servers=" + tlsBootstrap(),
                "spring.kafka.security.protocol=SSL",
                "spring.kafka.ssl.trust-store-location=file:" + certificates.trustStore(),
                "spring.kafka.ssl.trust-store-type=PKCS12",
                "spring.kafka.ssl.trust-store-password=" + certificates.password());
    }

    /**
     * As {@link #springTls()}, with the trust store as a Spring Boot SSL bundle named {@code bundle}
     * ({@code spring.ssl.bundle.jks.<bundle>.truststore.*}, {@code spring.kafka.ssl.bundle}).
     */
    public static List<String> springTlsBundle(String bundle) {
        TestCertificates certificates = certificates();
        String prefix = "spring.ssl.bundle.jks." + bundle + ".truststore.";
        return List.of("spring.kafka.bootstrap-servers=" + tlsBootstrap(),
                "spring.kafka.security.protocol=SSL",
                "spring.kafka.ssl.bundle=" + bundle,
                prefix + "location=file:" + certificates.trustStore(),
                prefix + "type=PKCS12",
                prefix + "password=" + certificates.password());
    }

    /** Creates {@code topic} on this broker, as {@link TestKafka#createTopic} does on its own. */
    public static void createTopic(String topic, int partitions) {
        TestKafka.createTopic(KraftBroker.get().plaintextBootstrap(), topic, partitions, Map.of());
    }

    /** Allows {@code user} the {@code operations} on {@code topic} alone (and nothing more), and waits until they hold. */
    public static void grant(String user, String topic, AclOperation... operations) {
        List<AclBinding> grants = java.util.Arrays.stream(operations).map(operation -> new AclBinding(
                new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
                new AccessControlEntry("User:" + user, "*", operation, AclPermissionType.ALLOW))).toList();
        try (Admin admin = Admin.create(Map.<String, Object>of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                KraftBroker.get().plaintextBootstrap()))) {
            admin.createAcls(grants).all().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("Could not grant " + user + " " + List.of(operations) + " on " + topic, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static String jaas(String user, String password) {
        return "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + user
                + "\" password=\"" + password + "\";";
    }
}
