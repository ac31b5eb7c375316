package dev.once.relay;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Asks Kafka, with the relay's own connection settings, why it did not answer the producer: a producer that cannot
 * fetch a topic's metadata says only "Topic X not present in metadata after N ms", whether the broker is unreachable
 * or the topic does not exist (and the broker does not create topics). A short-lived admin client tells the two apart.
 * Each probe opens and closes its client, so nothing connects in the background between failures. A missing topic is
 * a {@link KafkaRefusedException}: like refused credentials, it lasts until someone acts.
 */
final class KafkaProbe {

    /**
     * What an admin client does not know of a producer's settings, left out so that it does not warn about them.
     * Everything else stays, settings Kafka does not define among them: Spring Boot's SSL bundle travels as an object
     * under a key of its own, which its {@code ssl.engine.factory.class} reads.
     */
    private static final Set<String> PRODUCER_ONLY = producerOnly();

    private final Map<String, Object> admin;
    private final String bootstrap;
    private final Duration timeout;

    /**
     * @param producer the producer's settings: the admin client takes all but the producer's own (so connection,
     *        security, SSL, SASL and SSL bundle), so that it connects as the producer does, and a client id of its own
     *        (two clients with one id clash)
     */
    KafkaProbe(Map<String, Object> producer, Duration timeout) {
        this.admin = new HashMap<>(producer);
        admin.keySet().removeIf(PRODUCER_ONLY::contains);
        Object clientId = producer.get(CommonClientConfigs.CLIENT_ID_CONFIG);
        admin.put(CommonClientConfigs.CLIENT_ID_CONFIG, (clientId == null ? "once-relay" : clientId) + "-probe");
        // no call of a probe outlives the probe: not its own, nor the metadata fetch behind it
        admin.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        admin.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) timeout.toMillis());
        this.bootstrap = addresses(producer.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG));
        this.timeout = timeout;
    }

    private static Set<String> producerOnly() {
        Set<String> names = new HashSet<>(ProducerConfig.configNames());
        names.removeAll(AdminClientConfig.configNames());
        return Set.copyOf(names);
    }

    /** {@code host:port,host:port}, whether the setting is a list (as Spring Boot gives it) or a string. */
    static String addresses(Object bootstrap) {
        return bootstrap instanceof Collection<?> list
                ? String.join(",", list.stream().map(String::valueOf).toList()) : String.valueOf(bootstrap);
    }

    /** Whether Kafka answers and accepts the relay's credentials; throws the reason when not. */
    void verify() {
        TransportUnavailableException failure = ask(client -> {
            answers(client);
            return null;
        }, null);
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Why sending to {@code topics} timed out: Kafka unreachable, a topic missing, or (when both are fine) a broker
     * too slow to acknowledge.
     */
    TransportUnavailableException explainTimeout(Collection<String> topics, Throwable timedOut) {
        return ask(client -> {
            answers(client);
            for (String topic : topics) {
                try {
                    client.describeTopics(List.of(topic), new DescribeTopicsOptions().timeoutMs(millis()))
                            .allTopicNames().get(timeout.toMillis() + 1_000, TimeUnit.MILLISECONDS);
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                        return new KafkaRefusedException("Topic " + topic + " does not exist on Kafka at "
                                + bootstrap + ", and the broker does not create topics when first written to: create "
                                + "it (kafka-topics.sh --create --topic " + topic + ", or a KafkaAdmin NewTopic bean), "
                                + "or route its events to a topic that exists (once.outbox.relay.topic-prefix, a "
                                + "TopicRouter bean)", timedOut);
                    }
                    throw e;
                }
            }
            return new TransportUnavailableException("Kafka at " + bootstrap + " answers, and " + topics + " exist, "
                    + "but did not acknowledge within " + seconds() + " (" + timedOut.getMessage() + "): is a "
                    + "partition without a leader, or the broker overloaded?", timedOut);
        }, timedOut);
    }

    /**
     * The largest record batch each of {@code topics} takes: its {@code max.message.bytes}, or the broker's
     * {@code message.max.bytes} where the topic sets none; empty for a topic whose configuration the relay's principal
     * may not read. A topic that does not exist, or whose name Kafka refuses, is left out.
     *
     * @throws TransportUnavailableException when Kafka does not answer, or refuses the relay's credentials
     */
    Map<String, OptionalInt> maxMessageBytes(Collection<String> topics) {
        Map<String, OptionalInt> limits = new HashMap<>();
        TransportUnavailableException failure = ask(client -> {
            Map<ConfigResource, KafkaFuture<Config>> configs = client.describeConfigs(topics.stream()
                    .map(topic -> new ConfigResource(ConfigResource.Type.TOPIC, topic)).toList(),
                    new DescribeConfigsOptions().timeoutMs(millis())).values();
            for (Map.Entry<ConfigResource, KafkaFuture<Config>> topic : configs.entrySet()) {
                try {
                    ConfigEntry limit = topic.getValue().get(timeout.toMillis() + 1_000, TimeUnit.MILLISECONDS)
                            .get(TopicConfig.MAX_MESSAGE_BYTES_CONFIG);
                    limits.put(topic.getKey().name(), limit == null || limit.value() == null ? OptionalInt.empty()
                            : OptionalInt.of(Integer.parseInt(limit.value())));
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof AuthorizationException) {
                        limits.put(topic.getKey().name(), OptionalInt.empty());
                    } else if (!(e.getCause() instanceof UnknownTopicOrPartitionException
                            || e.getCause() instanceof InvalidTopicException)) { // the producer says why, record by record
                        throw e;
                    }
                }
            }
            return null;
        }, null);
        if (failure != null) {
            throw failure;
        }
        return limits;
    }

    /** One question to Kafka, on a client of its own: what it found wrong, or {@code null}. */
    private interface Question {
        TransportUnavailableException ask(Admin client)
                throws ExecutionException, InterruptedException, java.util.concurrent.TimeoutException;
    }

    /**
     * Asks {@code question}, and turns Kafka's failure to answer into the relay's reason.
     *
     * @param timedOut what timed out before the question was asked, reported when Kafka does not answer; null: the
     *        question's own timeout
     */
    private TransportUnavailableException ask(Question question, Throwable timedOut) {
        Admin client = Admin.create(admin);
        try {
            return question.ask(client);
        } catch (ExecutionException e) {
            return failure(e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            return unreachable(timedOut == null ? e : timedOut);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new TransportUnavailableException("Interrupted while asking Kafka at " + bootstrap, e);
        } finally {
            client.close(Duration.ZERO);
        }
    }

    /** Whether the cluster answers the relay's connection, its credentials accepted. */
    private void answers(Admin client)
            throws ExecutionException, InterruptedException, java.util.concurrent.TimeoutException {
        client.describeCluster(new DescribeClusterOptions().timeoutMs(millis())).nodes()
                .get(timeout.toMillis() + 1_000, TimeUnit.MILLISECONDS);
    }

    private TransportUnavailableException failure(Throwable cause) {
        if (refusal(cause) != null) {
            return refused(refusal(cause));
        }
        if (cause instanceof org.apache.kafka.common.errors.TimeoutException) {
            return unreachable(cause);
        }
        return new TransportUnavailableException("Kafka at " + bootstrap + " failed: " + cause, cause);
    }

    private TransportUnavailableException unreachable(Throwable cause) {
        return new TransportUnavailableException("Kafka at " + bootstrap + " did not answer within " + seconds()
                + ": check spring.kafka.bootstrap-servers and that the broker is reachable from this host", cause);
    }

    /** The relay's message for an authentication or authorization failure Kafka gave it. */
    KafkaRefusedException refused(Throwable refusal) {
        String what = refusal instanceof AuthorizationException
                ? "its principal is not authorized (" + detail(refusal) + "); grant it WRITE and DESCRIBE on the "
                        + "outbox topics, or"
                : detail(refusal) + ";";
        return new KafkaRefusedException("Kafka refused the relay's credentials: " + what + " check spring.kafka.* "
                + "security settings (security.protocol, sasl.mechanism, sasl.jaas.config, the SSL trust store) for "
                + "Kafka at " + bootstrap, refusal);
    }

    /**
     * The authentication or authorization failure in {@code failure}'s causes, or {@code null}: recognised by type,
     * as Kafka's clients throw them (SaslAuthenticationException and SslAuthenticationException are
     * AuthenticationExceptions; Topic-, Group-, Cluster- and TransactionalIdAuthorizationException are
     * AuthorizationExceptions).
     */
    static Throwable refusal(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof AuthenticationException || cause instanceof AuthorizationException) {
                return cause;
            }
        }
        return null;
    }

    /**
     * A failure's type and message, with its cause's message when it has one: an SSL handshake failure says only
     * "SSL handshake failed", its cause why (e.g. "PKIX path building failed: ... unable to find valid certification
     * path", a trust store without the broker's CA).
     */
    static String detail(Throwable failure) {
        String message = failure.getClass().getSimpleName() + ": " + failure.getMessage();
        Throwable cause = failure.getCause();
        return cause == null || cause == failure ? message : message + " (" + cause.getMessage() + ")";
    }

    private int millis() {
        return (int) timeout.toMillis();
    }

    private String seconds() {
        return timeout.toMillis() % 1000 == 0 ? timeout.toSeconds() + " s" : timeout.toMillis() + " ms";
    }
}
