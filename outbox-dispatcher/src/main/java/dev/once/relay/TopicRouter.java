package dev.once.relay;

/** Chooses the Kafka topic of a message. Implementations must be stateless and thread-safe. */
@FunctionalInterface
public interface TopicRouter {

    String topicFor(OutboxMessage message);

    /** The default: {@code <prefix>.<aggregate_type>}, e.g. {@code once.account}. */
    static TopicRouter byAggregateType(String prefix) {
        return message -> prefix + "." + message.aggregateType();
    }
}
