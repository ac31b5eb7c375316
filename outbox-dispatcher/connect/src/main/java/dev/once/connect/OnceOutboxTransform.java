package dev.once.connect;

import dev.once.relay.OutboxChangeEvents;
import dev.once.relay.TopicRouter;
import dev.once.wire.OutboxCodec;
import dev.once.wire.OutboxMessage;
import dev.once.wire.RecordSigning;
import dev.once.wire.SigningKeys;
import dev.once.wire.WireFormat;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.transforms.Transformation;

/**
 * A Kafka Connect single message transform that turns Debezium's change event of an {@code outbox_event} insert into
 * exactly the record Once's own relays publish ({@link OutboxCodec}: the same topic routing, key, value bytes and
 * headers, signature included). Debezium's heartbeats go on to their own topic ({@code __debezium-heartbeat.<topic.prefix>}),
 * as a key and no value: Connect stores the offsets of the records it sends, not of those a transform drops, and
 * Debezium moves the replication slot only to stored offsets, so without them a quiet outbox would hold the slot, and
 * the WAL, where its last event left it. Every other record (updates, deletes, the heartbeat's logical messages) is
 * dropped. Run it on the Debezium PostgreSQL connector with {@code key.converter=StringConverter} and the
 * {@code ByteArrayConverter} as value and header converter (the connector configuration shipped beside it), so that
 * the bytes reach Kafka as they are.
 *
 * <p>Settings, prefixed {@code transforms.<name>.} in the connector's configuration:
 * <ul>
 *   <li>{@code topic.prefix} ({@value WireFormat#DEFAULT_TOPIC_PREFIX}), {@code topic}, {@code topic.template}: as
 *       {@code once.outbox.relay.topic-prefix}, {@code topic} and {@code topic-template};</li>
 *   <li>{@code signing.key.<id>}: the key ring, as {@code once.outbox.signing.keys.<id>} (a Connect config provider
 *       keeps the secrets out of the configuration), or an Ed25519 pair, {@code signing.ed25519.private-key.<id>} and
 *       {@code signing.ed25519.public-key.<id>}; {@code signing.current-key}: the key that signs;
 *       {@code signing.mode=off}: unsigned, chosen explicitly.</li>
 * </ul>
 */
public final class OnceOutboxTransform<R extends ConnectRecord<R>> implements Transformation<R> {

    public static final String TOPIC_PREFIX = "topic.prefix";
    public static final String TOPIC = "topic";
    public static final String TOPIC_TEMPLATE = "topic.template";
    public static final String SIGNING_KEY_PREFIX = "signing.key.";
    /** An Ed25519 key pair signs instead of an HMAC secret: its private and public key, by id. */
    public static final String SIGNING_ED25519_PRIVATE_PREFIX = "signing.ed25519.private-key.";
    public static final String SIGNING_ED25519_PUBLIC_PREFIX = "signing.ed25519.public-key.";
    public static final String SIGNING_CURRENT_KEY = "signing.current-key";
    public static final String SIGNING_MODE = "signing.mode";

    /** The name Debezium gives the value schema of its heartbeat records (after its own name adjustment). */
    static final String HEARTBEAT_SCHEMA = "io.debezium.connector.common.Heartbeat";

    private static final ConfigDef CONFIG = new ConfigDef()
            .define(TOPIC_PREFIX, ConfigDef.Type.STRING, WireFormat.DEFAULT_TOPIC_PREFIX, ConfigDef.Importance.HIGH,
                    "Topics are named <topic.prefix>.<aggregate_type>, unless topic or topic.template is set")
            .define(TOPIC, ConfigDef.Type.STRING, "", ConfigDef.Importance.MEDIUM, "One topic for every event")
            .define(TOPIC_TEMPLATE, ConfigDef.Type.STRING, "", ConfigDef.Importance.MEDIUM,
                    "Topics named by a template over {aggregate_type}, {event_type} and {event_version}")
            .define(SIGNING_CURRENT_KEY, ConfigDef.Type.STRING, "", ConfigDef.Importance.MEDIUM,
                    "The id of the key that signs, when the ring (signing.key.<id>) holds several")
            .define(SIGNING_MODE, ConfigDef.Type.STRING, "", ConfigDef.Importance.HIGH,
                    "off: relay unsigned records (the dispatcher must run with once.outbox.signing.mode=off); "
                            + "anything else signs with the current key");

    private TopicRouter router;
    private RecordSigning signing;

    @Override
    public void configure(Map<String, ?> settings) {
        Map<String, Object> values = CONFIG.parse(settings);
        try {
            router = TopicRouter.configured((String) values.get(TOPIC), (String) values.get(TOPIC_TEMPLATE),
                    (String) values.get(TOPIC_PREFIX));
        } catch (IllegalArgumentException e) {
            throw new ConfigException("once-connect topic routing: " + e.getMessage());
        }
        signing = signing(settings, (String) values.get(SIGNING_MODE), (String) values.get(SIGNING_CURRENT_KEY));
    }

    /** The relay's side of the key ring: signs with the current key, unless signing is off. Never shows a secret. */
    static RecordSigning signing(Map<String, ?> settings, String mode, String current) {
        if ("off".equals(mode.toLowerCase(Locale.ROOT))) {
            return RecordSigning.off();
        }
        Map<String, String> secrets = new LinkedHashMap<>();
        Map<String, String> privateKeys = new LinkedHashMap<>();
        Map<String, String> publicKeys = new LinkedHashMap<>();
        settings.forEach((name, value) -> {
            if (name.startsWith(SIGNING_KEY_PREFIX)) {
                secrets.put(name.substring(SIGNING_KEY_PREFIX.length()), secret(value));
            } else if (name.startsWith(SIGNING_ED25519_PRIVATE_PREFIX)) {
                privateKeys.put(name.substring(SIGNING_ED25519_PRIVATE_PREFIX.length()), secret(value));
            } else if (name.startsWith(SIGNING_ED25519_PUBLIC_PREFIX)) {
                publicKeys.put(name.substring(SIGNING_ED25519_PUBLIC_PREFIX.length()), secret(value));
            }
        });
        if (secrets.isEmpty() && privateKeys.isEmpty()) {
            throw new ConfigException("once-connect signs the records it relays, and no signing key is configured: set "
                    + SIGNING_KEY_PREFIX + "<id> to a secret of " + SigningKeys.MIN_SECRET_BYTES + " bytes or more (the "
                    + "same ring as the consuming services' once.outbox.signing.keys), or " + SIGNING_MODE + "=off");
        }
        try {
            SigningKeys.Builder ring = SigningKeys.builder();
            secrets.forEach(ring::hmac);
            privateKeys.forEach((id, key) -> ring.ed25519(id, publicKeys.get(id), key));
            return RecordSigning.require(ring.current(current).build());
        } catch (IllegalArgumentException e) {
            throw new ConfigException("once-connect signing: " + e.getMessage());
        }
    }

    private static String secret(Object value) {
        return value instanceof org.apache.kafka.common.config.types.Password p ? p.value() : String.valueOf(value);
    }

    @Override
    public R apply(R record) {
        if (heartbeat(record)) { // sent, so that Connect stores its offset, which moves the slot
            return record.newRecord(record.topic(), record.kafkaPartition(), Schema.OPTIONAL_STRING_SCHEMA,
                    record.key() instanceof org.apache.kafka.connect.data.Struct key
                            ? String.valueOf(key.get(key.schema().fields().get(0))) : null,
                    Schema.OPTIONAL_BYTES_SCHEMA, null, record.timestamp(), new ConnectHeaders());
        }
        OutboxMessage message = OutboxChangeEvents.toMessage(record.value());
        if (message == null) {
            return null; // updates, deletes, logical messages: nothing to publish
        }
        ProducerRecord<String, byte[]> published = OutboxCodec.write(message, router.topicFor(message), signing);
        ConnectHeaders headers = new ConnectHeaders();
        for (Header header : published.headers()) {
            headers.addBytes(header.key(), header.value());
        }
        return record.newRecord(published.topic(), null, Schema.STRING_SCHEMA, published.key(),
                Schema.BYTES_SCHEMA, published.value(), record.timestamp(), headers);
    }

    private static boolean heartbeat(ConnectRecord<?> record) {
        Schema schema = record.valueSchema();
        return schema != null && schema.name() != null && schema.name().endsWith(HEARTBEAT_SCHEMA);
    }

    @Override
    public ConfigDef config() {
        return CONFIG;
    }

    @Override
    public void close() {
    }
}
