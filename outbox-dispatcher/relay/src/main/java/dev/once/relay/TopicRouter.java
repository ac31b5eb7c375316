package dev.once.relay;

import dev.once.wire.OutboxMessage;
import dev.once.wire.WireFormat;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Chooses the Kafka topic of a message. Implementations must be stateless and thread-safe. A Spring Boot
 * application picks one with {@code once.outbox.relay.topic} (fixed), {@code topic-template} or {@code topic-prefix},
 * or replaces it with a {@code TopicRouter} bean.
 */
@FunctionalInterface
public interface TopicRouter {

    String topicFor(OutboxMessage message);

    /**
     * The router a relay's settings describe, the same for every relay (Once's own and the Kafka Connect transform):
     * a fixed {@code topic}, else a {@code template}, else {@code <prefix>.<aggregate_type>}; blank means unset.
     *
     * @throws IllegalArgumentException when both a topic and a template are set, or the template is not valid
     */
    static TopicRouter configured(String topic, String template, String prefix) {
        boolean fixed = topic != null && !topic.isBlank();
        boolean templated = template != null && !template.isBlank();
        if (fixed && templated) {
            throw new IllegalArgumentException("both a fixed topic and a topic template are set; set one of them");
        }
        return fixed ? fixed(topic) : templated ? template(template) : byAggregateType(prefix);
    }

    /** The default: {@code <prefix>.<aggregate_type>}, e.g. {@code once.account}. */
    static TopicRouter byAggregateType(String prefix) {
        return message -> WireFormat.topic(prefix, message.aggregateType());
    }

    /** Every event to one topic, e.g. {@code orders.events}; consumers tell events apart by their headers. */
    static TopicRouter fixed(String topic) {
        if (topic == null || topic.isBlank()) {
            throw new IllegalArgumentException("a fixed topic needs a name");
        }
        return message -> topic;
    }

    /**
     * Topics named by a template over the event's aggregate type, type and version: {@code {aggregate_type}},
     * {@code {event_type}} and {@code {event_version}}, e.g. {@code orders.{aggregate_type}.{event_type}}.
     *
     * @throws IllegalArgumentException for a placeholder the template does not know
     */
    static TopicRouter template(String template) {
        Matcher placeholder = Pattern.compile("\\{([^}]*)}").matcher(template);
        while (placeholder.find()) {
            if (!placeholder.group(1).matches("aggregate_type|event_type|event_version")) {
                throw new IllegalArgumentException("topic template " + template + " has the unknown placeholder {"
                        + placeholder.group(1) + "}; it knows {aggregate_type}, {event_type} and {event_version}");
            }
        }
        return message -> template.replace("{aggregate_type}", message.aggregateType())
                .replace("{event_type}", message.eventType())
                .replace("{event_version}", Integer.toString(message.eventVersion()));
    }
}
