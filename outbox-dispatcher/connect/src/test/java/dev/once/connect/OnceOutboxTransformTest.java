package dev.once.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;

/** The transform's settings: a misconfiguration stops the connector with one message that names the fix. */
class OnceOutboxTransformTest {

    static final String SECRET = "a connect test secret of thirty-two bytes or more";

    static OnceOutboxTransform<SourceRecord> configured(Map<String, String> settings) {
        OnceOutboxTransform<SourceRecord> transform = new OnceOutboxTransform<>();
        transform.configure(settings);
        return transform;
    }

    @Test
    void without_a_signing_key_it_asks_for_one_or_for_signing_mode_off() {
        assertThatThrownBy(() -> configured(Map.of())).isInstanceOf(ConfigException.class)
                .hasMessageContaining("signing.key.<id>").hasMessageContaining("signing.mode=off");
        assertThat(configured(Map.of("signing.mode", "off"))).isNotNull();
    }

    @Test
    void a_short_secret_is_refused_by_its_key_id_and_never_shown() {
        assertThatThrownBy(() -> configured(Map.of("signing.key.k1", "short"))).isInstanceOf(ConfigException.class)
                .hasMessageContaining("'k1'").hasMessageNotContaining("short").hasMessageContaining("32");
    }

    @Test
    void a_fixed_topic_and_a_template_together_are_refused() {
        assertThatThrownBy(() -> configured(Map.of("signing.key.k1", SECRET, "topic", "orders",
                "topic.template", "orders.{event_type}"))).isInstanceOf(ConfigException.class)
                .hasMessageContaining("set one of them");
    }

    @Test
    void a_template_with_an_unknown_placeholder_is_refused_by_name() {
        assertThatThrownBy(() -> configured(Map.of("signing.key.k1", SECRET, "topic.template", "orders.{tenant}")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("{tenant}");
    }

    @Test
    void records_that_are_not_outbox_inserts_are_dropped() {
        OnceOutboxTransform<SourceRecord> transform = configured(Map.of("signing.key.k1", SECRET));
        SourceRecord heartbeat = new SourceRecord(Map.of(), Map.of(), "__debezium-heartbeat.once", null, "beat");

        assertThat(transform.apply(heartbeat)).isNull();
    }
}
