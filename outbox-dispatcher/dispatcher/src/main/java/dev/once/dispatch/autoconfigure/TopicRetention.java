package dev.once.dispatch.autoconfigure;

import dev.once.OnceConfigurationException;
import dev.once.dispatch.autoconfigure.OnceDispatcherProperties.RetentionCheck;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the handlers' claims outlive every redelivery the consumed topics allow. A topic keeps a record for its
 * {@code retention.ms}, for ever when that is {@code -1} or the topic is compacted; a claim is kept for
 * {@code once.dispatcher.claim-retention}. A redelivery that comes later than the claim (a group reset to earliest, a
 * topic replayed, a dead letter re-published) finds no claim and runs the handlers again. Read from the broker at
 * startup; WARN says so with both figures, FAIL refuses to start.
 */
final class TopicRetention {

    private static final Logger log = LoggerFactory.getLogger(TopicRetention.class);
    private static final Duration ASK_FOR = Duration.ofSeconds(15);

    private TopicRetention() {
    }

    /** Reads the topics' retention and acts on what it finds as {@code mode} says. */
    static void check(Map<String, Object> adminSettings, Collection<String> topics, Duration claimRetention,
                      RetentionCheck mode) {
        if (mode == RetentionCheck.OFF || topics.isEmpty()) {
            return;
        }
        Map<ConfigResource, Config> configs;
        try (Admin admin = Admin.create(adminSettings)) {
            configs = admin.describeConfigs(topics.stream().map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t))
                    .toList()).all().get(ASK_FOR.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            log.warn("Could not read the retention of topics {} to compare it with the handlers' claim retention ({}): {}",
                    topics, claimRetention, e.getCause() == null ? e.toString() : e.getCause().toString());
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        List<String> findings = findings(configs, claimRetention);
        if (findings.isEmpty()) {
            return;
        }
        String problem = String.join("; ", findings);
        String fix = "Set once.dispatcher.claim-retention to at least the longest redelivery you allow (the topics' "
                + "retention.ms), or lower the topics' retention; once.dispatcher.retention-check=warn accepts it";
        if (mode == RetentionCheck.FAIL) {
            throw new OnceConfigurationException(problem, fix);
        }
        log.warn("{}. A redelivery later than the claims runs the handlers again. {}", problem, fix);
    }

    /** What is wrong with each topic's retention against {@code claimRetention}: nothing when the claims outlive it. */
    static List<String> findings(Map<ConfigResource, Config> configs, Duration claimRetention) {
        List<String> findings = new ArrayList<>();
        configs.forEach((topic, config) -> {
            String policy = value(config, TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_DELETE);
            long retention = Long.parseLong(value(config, TopicConfig.RETENTION_MS_CONFIG, "-1"));
            if (policy.contains(TopicConfig.CLEANUP_POLICY_COMPACT) || retention < 0) {
                findings.add("topic " + topic.name() + " keeps records for ever (" + (retention < 0 ? "retention.ms=-1"
                        : "cleanup.policy=" + policy) + ") while handlers' claims are kept " + claimRetention
                        + " (once.dispatcher.claim-retention): choose how long a redelivery may come late");
            } else if (Duration.ofMillis(retention).compareTo(claimRetention) > 0) {
                findings.add("topic " + topic.name() + " keeps records " + Duration.ofMillis(retention)
                        + " (retention.ms=" + retention + ") while handlers' claims are kept " + claimRetention
                        + " (once.dispatcher.claim-retention)");
            }
        });
        findings.sort(null);
        return findings;
    }

    private static String value(Config config, String name, String otherwise) {
        var entry = config.get(name);
        return entry == null || entry.value() == null ? otherwise : entry.value();
    }
}
