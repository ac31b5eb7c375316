package dev.once.relay;

import dev.once.wire.WireFormat;

/** Chooses the Kafka topic of a message. Implementations must be stateless and thread-safe. */
@FunctionalInterface
public interface TopicRouter {

    String topicFor(OutboxMessage message);

    /** The default: {@code <prefix>.<aggregate_type>}, e.g. {@code once.account}. */
    static TopicRouter byAggregateType(String prefix) {
        return message -> WireFormat.topic(prefix, message.aggregateType());
    }
}
