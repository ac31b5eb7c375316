package dev.once.dispatch.autoconfigure;

import dev.once.OnceConfigurationException;
import dev.once.wire.WireFormat;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Checks at startup, with an admin client that connects as the application's own ({@code KafkaAdmin}'s settings,
 * from {@code spring.kafka.*}), that every topic the dispatcher consumes exists, and its dead-letter topic
 * ({@code <topic>.dlt}) too. A consumer of a missing topic waits without end and warns about it on every metadata
 * refresh; a dead letter for a missing topic blocks its partition. Either is one clear failure here instead, naming
 * the topics and the fix, as is a broker that does not answer or refuses the credentials.
 */
final class TopicCheck {

    /** How long the check waits for Kafka's answer. */
    static final Duration TIMEOUT = Duration.ofSeconds(10);

    private static final String SKIP = "; or set once.dispatcher.check-topics=false to start without this check";

    private final Map<String, Object> admin;
    private final String bootstrap;

    /**
     * @param settings admin client settings ({@code KafkaAdmin}'s) or a consumer's: a consumer's own are left out, so
     *        that the admin client does not warn about them; everything else stays, settings Kafka does not define
     *        among them (Spring Boot's SSL bundle travels as an object under a key of its own)
     */
    TopicCheck(Map<String, Object> settings) {
        this.admin = new HashMap<>(settings);
        java.util.Set<String> consumerOnly = new java.util.HashSet<>(
                org.apache.kafka.clients.consumer.ConsumerConfig.configNames());
        consumerOnly.removeAll(AdminClientConfig.configNames());
        admin.keySet().removeIf(consumerOnly::contains);
        Object clientId = settings.get(CommonClientConfigs.CLIENT_ID_CONFIG);
        admin.put(CommonClientConfigs.CLIENT_ID_CONFIG, (clientId == null ? "once-dispatcher" : clientId) + "-check");
        // the metadata fetch behind the check gives up when the check does, not after the default minute
        admin.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis());
        admin.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis());
        Object servers = settings.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
        this.bootstrap = servers instanceof java.util.Collection<?> list
                ? String.join(",", list.stream().map(String::valueOf).toList()) : String.valueOf(servers);
    }

    /** The admin client's settings this check uses, for other checks at startup. */
    Map<String, Object> adminSettings() {
        return admin;
    }

    /** @throws OnceConfigurationException naming the topics that are missing, or why Kafka could not say */
    void verify(List<String> topics) {
        List<String> wanted = new ArrayList<>(topics);
        topics.forEach(topic -> wanted.add(WireFormat.deadLetterTopic(topic)));
        List<String> missing = new ArrayList<>();
        Admin client = Admin.create(admin);
        try {
            Map<String, KafkaFuture<TopicDescription>> described = client.describeTopics(wanted,
                    new DescribeTopicsOptions().timeoutMs((int) TIMEOUT.toMillis())).topicNameValues();
            for (String topic : wanted) {
                try {
                    described.get(topic).get(TIMEOUT.toMillis() + 1_000, TimeUnit.MILLISECONDS);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                        throw failed(e.getCause(), topics);
                    }
                    missing.add(topic);
                }
            }
        } catch (java.util.concurrent.TimeoutException e) {
            throw unanswered(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while checking the dispatcher's topics", e);
        } finally {
            client.close(Duration.ZERO);
        }
        if (!missing.isEmpty()) {
            List<String> consumed = missing.stream().filter(topics::contains).toList();
            List<String> deadLetters = missing.stream().filter(t -> !topics.contains(t)).toList();
            String problem = "Topics the dispatcher needs do not exist on Kafka at " + bootstrap + ":"
                    + (consumed.isEmpty() ? "" : " once.dispatcher.topics names " + consumed)
                    + (consumed.isEmpty() || deadLetters.isEmpty() ? "" : ", and")
                    + (deadLetters.isEmpty() ? "" : " the dead-letter topics " + deadLetters + " (a record no "
                            + "handler can take goes to <topic>" + WireFormat.DEAD_LETTER_SUFFIX + ")")
                    + " are missing";
            throw new OnceConfigurationException(problem, "Create them (kafka-topics.sh --create --topic <name>, or "
                    + "KafkaAdmin.NewTopics beans, which Spring Boot creates at startup), or correct "
                    + "once.dispatcher.topics" + SKIP);
        }
    }

    private OnceConfigurationException failed(Throwable cause, List<String> topics) {
        if (cause instanceof AuthenticationException) {
            return new OnceConfigurationException("Kafka at " + bootstrap + " refused the dispatcher's credentials: "
                    + detail(cause), "Check spring.kafka.* security settings (spring.kafka.security.protocol, "
                    + "spring.kafka.properties.sasl.mechanism and .sasl.jaas.config, spring.kafka.ssl.* or "
                    + "spring.kafka.ssl.bundle)", cause);
        }
        if (cause instanceof AuthorizationException) {
            return new OnceConfigurationException("Kafka at " + bootstrap + " does not let the dispatcher's principal "
                    + "describe its topics " + topics + ": " + detail(cause), "Grant the principal DESCRIBE and READ on "
                    + "the topics, READ on the consumer group and WRITE on the dead-letter topics, or check "
                    + "spring.kafka.* security settings" + SKIP, cause);
        }
        if (cause instanceof org.apache.kafka.common.errors.TimeoutException) {
            return unanswered(cause);
        }
        return new OnceConfigurationException("Kafka at " + bootstrap + " could not say whether the dispatcher's "
                + "topics exist: " + detail(cause), "See the cause" + SKIP, cause);
    }

    private OnceConfigurationException unanswered(Throwable cause) {
        return new OnceConfigurationException("Kafka at " + bootstrap + " did not answer within " + TIMEOUT.toSeconds()
                + " s, so the dispatcher could not check that its topics exist", "Check spring.kafka.bootstrap-servers "
                + "and that the broker is reachable from this host" + SKIP, cause);
    }

    /** A failure's type and message, and its cause's, which for an SSL handshake is the one that says why. */
    private static String detail(Throwable failure) {
        Throwable cause = failure.getCause();
        return failure.getClass().getSimpleName() + ": " + failure.getMessage()
                + (cause == null || cause == failure ? "" : " (" + cause.getMessage() + ")");
    }
}
