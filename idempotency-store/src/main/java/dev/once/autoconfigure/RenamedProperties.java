package dev.once.autoconfigure;

import dev.once.OnceConfigurationException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.core.env.Environment;

/**
 * Settings an earlier version of Once read under another name. Spring Boot ignores a property nothing binds, so a
 * service upgraded with its old settings would run on defaults (another replication slot, another broker) without a
 * word; instead startup stops and names the replacement. The same names are deprecated, level error, in the
 * configuration metadata, so that an IDE marks them too.
 */
final class RenamedProperties {

    /** Old name → what replaces it. */
    static final Map<String, String> RENAMED = renamed();

    private RenamedProperties() {
    }

    private static Map<String, String> renamed() {
        Map<String, String> renamed = new LinkedHashMap<>();
        for (String cdc : List.of("slot-name", "publication-name", "schema", "heartbeat", "leader-poll")) {
            renamed.put("once.outbox.relay." + cdc, "once.outbox.relay.cdc." + cdc);
        }
        renamed.put("once.outbox.relay.bootstrap-servers", "spring.kafka.bootstrap-servers");
        renamed.put("once.dispatcher.bootstrap-servers", "spring.kafka.bootstrap-servers");
        return renamed;
    }

    /** @throws OnceConfigurationException naming every old setting found and its replacement */
    static void check(Environment environment) {
        Map<String, String> found = new LinkedHashMap<>();
        RENAMED.forEach((old, replacement) -> {
            if (environment.containsProperty(old)) {
                found.put(old, replacement);
            }
        });
        if (!found.isEmpty()) {
            throw new OnceConfigurationException("Settings of an earlier version of Once are set and would be ignored: "
                    + String.join(", ", found.keySet()), "Rename them: " + found.entrySet().stream()
                    .map(e -> e.getKey() + " → " + e.getValue()).reduce((a, b) -> a + ", " + b).orElse(""));
        }
    }
}
