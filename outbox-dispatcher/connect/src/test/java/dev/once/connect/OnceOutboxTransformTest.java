package dev.once.connect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
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
    void an_ed25519_pair_signs_and_a_private_key_without_its_public_key_is_refused_unshown() {
        String publicKey = "MCowBQYDK2VwAyEAWFOmeoBU5Tr+CvKnP07xMYTZMlZLLgz8uuUnDqnciuo=";
        String privateKey = "MC4CAQAwBQYDK2VwBCIEIBjwToKIFzW9lBZtElKxp8rlTtwkn5yRRnrY1mEsOqh6";
        assertThat(OnceOutboxTransform.signing(Map.of("signing.ed25519.private-key.e1", privateKey,
                "signing.ed25519.public-key.e1", publicKey), "", "").keys().current()).isEqualTo("e1");
        assertThatThrownBy(() -> configured(Map.of("signing.ed25519.private-key.e1", privateKey)))
                .isInstanceOf(ConfigException.class).hasMessageContaining("'e1' has no public key")
                .hasMessageNotContaining(privateKey);
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
        SourceRecord message = new SourceRecord(Map.of(), Map.of(), "once-connect.message", null, "once-heartbeat");

        assertThat(transform.apply(message)).isNull();
    }

    /** Connect stores the offsets of records it sends: a heartbeat dropped here would never move the slot. */
    @Test
    void debeziums_heartbeats_go_on_to_their_topic_with_their_offset_as_a_key_and_no_value() {
        OnceOutboxTransform<SourceRecord> transform = configured(Map.of("signing.key.k1", SECRET));
        Schema keySchema = SchemaBuilder.struct().name("io.debezium.connector.common.ServerNameKey")
                .field("serverName", Schema.STRING_SCHEMA).build();
        Schema valueSchema = SchemaBuilder.struct().name("io.debezium.connector.common.Heartbeat")
                .field("ts_ms", Schema.INT64_SCHEMA).build();
        Map<String, Object> offset = Map.of("lsn", 42L, "lsn_commit", 40L);
        SourceRecord heartbeat = new SourceRecord(Map.of("server", "once-connect"), offset,
                "__debezium-heartbeat.once-connect", 0, keySchema, new Struct(keySchema).put("serverName", "once-connect"),
                valueSchema, new Struct(valueSchema).put("ts_ms", 1L));

        SourceRecord sent = transform.apply(heartbeat);

        assertThat(sent).isNotNull();
        assertThat(sent.topic()).isEqualTo("__debezium-heartbeat.once-connect");
        assertThat(sent.key()).isEqualTo("once-connect");
        assertThat(sent.value()).isNull();
        assertThat(sent.sourceOffset()).isEqualTo(offset);
    }
}
