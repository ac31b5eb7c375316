package dev.once.dispatch.autoconfigure;

import dev.once.dispatch.ParkingPolicy;
import dev.once.dispatch.UnhandledPolicy;
import dev.once.dispatch.UnhandledPolicy.Action;
import dev.once.idempotency.IdempotencyDefaults;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
    private int concurrency = dev.once.dispatch.KafkaEventDispatcher.CONCURRENCY;

    /**
     * With parking off: deliveries of a record whose handler keeps failing before it is dead-lettered. (With parking
     * on, a failing record parks its key at once.)
     */
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

    /** Parking of failing keys: {@code once.dispatcher.parking.*}. */
    private final Parking parking = new Parking();

    /** What becomes of events no handler takes: {@code once.dispatcher.unhandled.*}. */
    private final Unhandled unhandled = new Unhandled();

    public Parking getParking() {
        return parking;
    }

    public Unhandled getUnhandled() {
        return unhandled;
    }

    /**
     * A key whose event keeps failing is parked in PostgreSQL with its later events, in order, and retried in the
     * background, while the partition flows on.
     */
    public static class Parking {

        /**
         * Whether failing keys are parked. Off: a failing record is retried in place (max-attempts, retry-*) and
         * then dead-lettered, and events to hold are dead-lettered.
         */
        private boolean enabled = true;

        /** The first retry of a parked event, after its first failure. */
        private Duration initialInterval = ParkingPolicy.INITIAL_INTERVAL;

        /** Each further retry waits this many times longer. */
        private double multiplier = ParkingPolicy.MULTIPLIER;

        /** The longest wait between two retries. */
        private Duration maxInterval = ParkingPolicy.MAX_INTERVAL;

        /**
         * How long after its first failure an event is retried; then it is failed and dead-lettered, and its key
         * stays parked until an operator retries or abandons it.
         */
        private Duration window = ParkingPolicy.WINDOW;

        public ParkingPolicy toPolicy() {
            return new ParkingPolicy(initialInterval, multiplier, maxInterval, window);
        }

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getInitialInterval() {
            return initialInterval;
        }

        public void setInitialInterval(Duration initialInterval) {
            this.initialInterval = initialInterval;
        }

        public double getMultiplier() {
            return multiplier;
        }

        public void setMultiplier(double multiplier) {
            this.multiplier = multiplier;
        }

        public Duration getMaxInterval() {
            return maxInterval;
        }

        public void setMaxInterval(Duration maxInterval) {
            this.maxInterval = maxInterval;
        }

        public Duration getWindow() {
            return window;
        }

        public void setWindow(Duration window) {
            this.window = window;
        }
    }

    /**
     * Events no handler takes. A foreign type (no handler in any version: another service's events on a shared
     * topic) is skipped and counted by default; an unknown version of a handled type (a producer deployed before its
     * consumers) is held until a handler for it runs. Poison is dead-lettered whatever this says.
     */
    public static class Unhandled {

        /** A type no handler takes in any version: skip, hold or dead-letter. */
        private Action foreignType = UnhandledPolicy.FOREIGN_TYPE;

        /** A handled type in a version no handler takes: skip, hold or dead-letter. */
        private Action unknownVersion = UnhandledPolicy.UNKNOWN_VERSION;

        /**
         * Per topic, over the two above, e.g.
         * {@code once.dispatcher.unhandled.topics[once.account].foreign-type=dead-letter} (brackets keep the dots).
         */
        private Map<String, Topic> topics = new LinkedHashMap<>();

        /** Per event type, over everything else, e.g. {@code once.dispatcher.unhandled.types.AuditTrail=skip}. */
        private Map<String, Action> types = new LinkedHashMap<>();

        /** One topic's choices; either may be left out. */
        public static class Topic {
            private Action foreignType;
            private Action unknownVersion;

            public Action getForeignType() {
                return foreignType;
            }

            public void setForeignType(Action foreignType) {
                this.foreignType = foreignType;
            }

            public Action getUnknownVersion() {
                return unknownVersion;
            }

            public void setUnknownVersion(Action unknownVersion) {
                this.unknownVersion = unknownVersion;
            }
        }

        public UnhandledPolicy toPolicy() {
            UnhandledPolicy policy = UnhandledPolicy.ofDefaults().foreignType(foreignType).unknownVersion(unknownVersion);
            for (Map.Entry<String, Topic> topic : topics.entrySet()) {
                if (topic.getValue().getForeignType() != null) {
                    policy = policy.foreignTypeOn(topic.getKey(), topic.getValue().getForeignType());
                }
                if (topic.getValue().getUnknownVersion() != null) {
                    policy = policy.unknownVersionOn(topic.getKey(), topic.getValue().getUnknownVersion());
                }
            }
            for (Map.Entry<String, Action> type : types.entrySet()) {
                policy = policy.forType(type.getKey(), type.getValue());
            }
            return policy;
        }

        public Action getForeignType() {
            return foreignType;
        }

        public void setForeignType(Action foreignType) {
            this.foreignType = foreignType;
        }

        public Action getUnknownVersion() {
            return unknownVersion;
        }

        public void setUnknownVersion(Action unknownVersion) {
            this.unknownVersion = unknownVersion;
        }

        public Map<String, Topic> getTopics() {
            return topics;
        }

        public void setTopics(Map<String, Topic> topics) {
            this.topics = topics;
        }

        public Map<String, Action> getTypes() {
            return types;
        }

        public void setTypes(Map<String, Action> types) {
            this.types = types;
        }
    }

    /** The lease of LEASED handlers' claims. */
    private Duration lease = IdempotencyDefaults.LEASE;

    /**
     * How long a handler's claim on an event is kept, and so how late a redelivery is still skipped: at least as long
     * as the consumed topics keep their records (retention.ms). Apart from the request TTL of once.idempotency.ttl.
     */
    private Duration claimRetention = dev.once.dispatch.EventDispatcher.CLAIM_RETENTION;

    /**
     * What startup does when a consumed topic keeps records longer than claim-retention (or for ever): WARN (log
     * both figures), FAIL (refuse to start) or OFF.
     */
    private RetentionCheck retentionCheck = RetentionCheck.WARN;

    /** The day partitions of the handlers' claims (table once_handler_claim). */
    private final ClaimPartitions claimPartitions = new ClaimPartitions();

    public ClaimPartitions getClaimPartitions() {
        return claimPartitions;
    }

    /** How the day partitions of once_handler_claim are kept: created ahead, dropped after the claim retention. */
    public static class ClaimPartitions {

        /** Whether this instance creates and drops partitions (one instance at a time does; all may run it). */
        private boolean enabled = true;

        /** How many days after today have their partition ready. */
        private int daysAhead = dev.once.idempotency.ClaimPartitions.DAYS_AHEAD;

        /** How often partitions are created and dropped. */
        private Duration interval = dev.once.idempotency.ClaimPartitions.INTERVAL;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public int getDaysAhead() {
            return daysAhead;
        }

        public void setDaysAhead(int daysAhead) {
            this.daysAhead = daysAhead;
        }

        public Duration getInterval() {
            return interval;
        }

        public void setInterval(Duration interval) {
            this.interval = interval;
        }
    }

    /** The options of the claims' partitions, with {@code claim-retention}. */
    public dev.once.idempotency.ClaimPartitions.Options toPartitionOptions() {
        try {
            return new dev.once.idempotency.ClaimPartitions.Options(claimRetention, claimPartitions.getDaysAhead(),
                    claimPartitions.getInterval());
        } catch (IllegalArgumentException e) {
            throw new dev.once.OnceConfigurationException("once.dispatcher.claim-partitions.* is invalid: "
                    + e.getMessage(), "Set once.dispatcher.claim-retention and claim-partitions.interval to positive "
                    + "durations and claim-partitions.days-ahead to 1 or more");
        }
    }

    /** What startup does when a topic keeps records longer than the claims are kept. */
    public enum RetentionCheck { WARN, FAIL, OFF }

    public Duration getClaimRetention() {
        return claimRetention;
    }

    public void setClaimRetention(Duration claimRetention) {
        this.claimRetention = claimRetention;
    }

    public RetentionCheck getRetentionCheck() {
        return retentionCheck;
    }

    public void setRetentionCheck(RetentionCheck retentionCheck) {
        this.retentionCheck = retentionCheck;
    }

    /** The handlers' claim policy: the lease, and the claim retention as the claims' TTL. */
    public dev.once.idempotency.ClaimPolicy toClaimPolicy() {
        if (claimRetention.compareTo(lease) <= 0) {
            throw new dev.once.OnceConfigurationException("once.dispatcher.claim-retention (" + claimRetention
                    + ") is not longer than once.dispatcher.lease (" + lease + ")", "Keep claims longer than a lease: "
                    + "raise once.dispatcher.claim-retention (Kafka keeps records 7 days by default)");
        }
        return dev.once.idempotency.ClaimPolicy.custom().lease(lease).ttl(claimRetention).build();
    }

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
