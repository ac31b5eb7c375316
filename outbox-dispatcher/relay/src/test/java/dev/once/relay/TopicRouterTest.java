package dev.once.relay;

import dev.once.wire.OutboxMessage;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.OnceConfigurationException;
import dev.once.relay.autoconfigure.OnceRelayProperties;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class TopicRouterTest {

    static final OutboxMessage PLACED = new OutboxMessage(UUID.randomUUID(), "acme", "alice", "order", "o-1",
            "OrderPlaced", 2, new byte[0], "application/json", Map.of(), null);

    @Test
    void by_default_each_aggregate_type_has_a_topic_under_the_prefix() {
        assertThat(new OnceRelayProperties().toTopicRouter().topicFor(PLACED)).isEqualTo("once.order");
    }

    @Test
    void a_fixed_topic_takes_every_event() {
        OnceRelayProperties properties = new OnceRelayProperties();
        properties.setTopic("orders.events");

        assertThat(properties.toTopicRouter().topicFor(PLACED)).isEqualTo("orders.events");
    }

    @Test
    void a_template_names_topics_after_aggregate_type_event_type_and_version() {
        OnceRelayProperties properties = new OnceRelayProperties();
        properties.setTopicTemplate("shop.{aggregate_type}.{event_type}.v{event_version}");

        assertThat(properties.toTopicRouter().topicFor(PLACED)).isEqualTo("shop.order.OrderPlaced.v2");
    }

    @Test
    void an_unknown_placeholder_or_both_settings_at_once_are_configuration_errors() {
        OnceRelayProperties template = new OnceRelayProperties();
        template.setTopicTemplate("shop.{tenant}");
        assertThatThrownBy(template::toTopicRouter).isInstanceOf(OnceConfigurationException.class)
                .hasMessageContaining("{tenant}");

        OnceRelayProperties both = new OnceRelayProperties();
        both.setTopic("a");
        both.setTopicTemplate("b.{event_type}");
        assertThatThrownBy(both::toTopicRouter).isInstanceOf(OnceConfigurationException.class)
                .hasMessageContaining("both a fixed topic and a topic template are set");
    }
}
