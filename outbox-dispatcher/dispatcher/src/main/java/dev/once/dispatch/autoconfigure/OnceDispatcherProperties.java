package dev.once.dispatch.autoconfigure;

import dev.once.idempotency.IdempotencyDefaults;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** {@code once.dispatcher.*}: the Kafka consumers that run registered handlers exactly once. */
@ConfigurationProperties("once.dispatcher")
public class OnceDispatcherProperties {

    /** Whether the dispatcher runs. It starts only when topics are configured. */
    private boolean enabled = true;

    /**
     * The consumer group; every instance of the service shares it, and no other service may. Empty means
     * {@code spring.kafka.consumer.group-id}, else {@code <spring.application.name>.once}.
     */
    private String groupId = "";

    /** Consumer properties of the dispatcher only, over Spring Boot's {@code spring.kafka.consumer.*}. */
    private java.util.Map<String, String> consumer = new java.util.LinkedHashMap<>();

    /** Producer properties of the dead-letter producer only, over Spring Boot's {@code spring.kafka.producer.*}. */
    private java.util.Map<String, String> producer = new java.util.LinkedHashMap<>();

    /** Topics to consume, e.g. once.account. */
    private List<String> topics = new ArrayList<>();

    /**
     * Whether the consumers start only after checking that every topic and its dead-letter topic
     * ({@code <topic>.dlt}) exist, and that Kafka answers and accepts the application's credentials; a failed check
     * stops the application with what to fix.
     */
    private boolean checkTopics = true;

    /** Consumer threads per instance. */
    private int concurrency = 1;

    /** Deliveries of a record whose handler keeps failing before it is dead-lettered. */
    private int maxAttempts = dev.once.dispatch.RetryPolicy.MAX_ATTEMPTS;

    /** The first pause before a failed record is delivered again. */
    private Duration retryInitialInterval = dev.once.dispatch.RetryPolicy.INITIAL_INTERVAL;

    /** Each further pause is this many times longer. */
    private double retryMultiplier = dev.once.dispatch.RetryPolicy.MULTIPLIER;

    /** The longest pause between two deliveries. */
    private Duration retryMaxInterval = dev.once.dispatch.RetryPolicy.MAX_INTERVAL;

    public dev.once.dispatch.RetryPolicy toRetryPolicy() {
        return new dev.once.dispatch.RetryPolicy(maxAttempts, retryInitialInterval, retryMultiplier, retryMaxInterval);
    }

    public Duration getRetryInitialInterval() {
        return retryInitialInterval;
    }

    public void setRetryInitialInterval(Duration retryInitialInterval) {
        this.retryInitialInterval = retryInitialInterval;
    }

    public double getRetryMultiplier() {
        return retryMultiplier;
    }

    public void setRetryMultiplier(double retryMultiplier) {
        this.retryMultiplier = retryMultiplier;
    }

    public Duration getRetryMaxInterval() {
        return retryMaxInterval;
    }

    public void setRetryMaxInterval(Duration retryMaxInterval) {
        this.retryMaxInterval = retryMaxInterval;
    }

    /** The lease of LEASED handlers' claims. */
    private Duration lease = IdempotencyDefaults.LEASE;

    public boolean isCheckTopics() {
        return checkTopics;
    }

    public void setCheckTopics(boolean checkTopics) {
        this.checkTopics = checkTopics;
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public java.util.Map<String, String> getConsumer() {
        return consumer;
    }

    public void setConsumer(java.util.Map<String, String> consumer) {
        this.consumer = consumer;
    }

    public java.util.Map<String, String> getProducer() {
        return producer;
    }

    public void setProducer(java.util.Map<String, String> producer) {
        this.producer = producer;
    }

    public String getGroupId() {
        return groupId;
    }

    public void setGroupId(String groupId) {
        this.groupId = groupId;
    }

    public List<String> getTopics() {
        return topics;
    }

    public void setTopics(List<String> topics) {
        this.topics = topics;
    }

    public int getConcurrency() {
        return concurrency;
    }

    public void setConcurrency(int concurrency) {
        this.concurrency = concurrency;
    }

    public int getMaxAttempts() {
        return maxAttempts;
    }

    public void setMaxAttempts(int maxAttempts) {
        this.maxAttempts = maxAttempts;
    }

    public Duration getLease() {
        return lease;
    }

    public void setLease(Duration lease) {
        this.lease = lease;
    }
}
