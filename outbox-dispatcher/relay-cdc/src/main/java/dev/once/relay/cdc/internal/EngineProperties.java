package dev.once.relay.cdc.internal;

import dev.once.relay.RelayOptions;
import dev.once.relay.cdc.CdcSettings;
import java.util.Properties;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The Debezium engine configuration of a CDC relay: one place, for the relay and for the benchmark that measures the
 * engine on its own (the floor of the relay's latency). Not API.
 */
public final class EngineProperties {

    /** How often the engine polls Debezium's queue when it finds it empty. */
    static final String POLL_INTERVAL_MS = "5";
    /** Debezium's queue holds this many engine batches, so decoding goes on while a batch is published. */
    static final int QUEUED_BATCHES = 4;

    private EngineProperties() {
    }

    /** The engine's properties for the relay's slot, schema and batch size. */
    public static Properties of(CdcSettings settings, RelayOptions options) {
        PostgresCoordinates db = PostgresCoordinates.fromJdbcUrl(settings.jdbcUrl());
        String outbox = settings.schema() + ".outbox_event";
        Properties p = new Properties();
        p.setProperty("name", settings.slotName());
        p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
        p.setProperty("offset.storage", JdbcOffsetBackingStore.class.getName());
        p.setProperty(JdbcOffsetBackingStore.KEY_PROPERTY, settings.slotName());
        p.setProperty("offset.flush.interval.ms", "1000");
        p.setProperty("database.hostname", db.host());
        p.setProperty("database.port", Integer.toString(db.port()));
        p.setProperty("database.dbname", db.database());
        p.setProperty("database.user", settings.user());
        p.setProperty("database.password", settings.password() == null ? "" : settings.password());
        // TLS as the URL asks for it (Debezium's own default is sslmode=prefer: no certificate checked, none shown)
        db.tls().forEach(p::setProperty);
        // The source partition of the stored offsets: never to change, or every relay would snapshot anew.
        p.setProperty("topic.prefix", "once");
        // Debezium's MBeans are named after the prefix; the slot tells apart the relays of two databases in one JVM,
        // whose second engine would otherwise wait a minute for the first one's names and then run without metrics.
        p.setProperty("custom.metric.tags", "slot=" + settings.slotName());
        p.setProperty("plugin.name", "pgoutput");
        p.setProperty("slot.name", settings.slotName());
        p.setProperty("publication.name", settings.publicationName());
        p.setProperty("publication.autocreate.mode", "disabled");
        p.setProperty("table.include.list", outbox + "," + settings.schema() + ".once_relay_heartbeat");
        // Only what a message is made of: the relay bookkeeping columns (and their timestamp parsing) stay out.
        p.setProperty("column.exclude.list", Stream.of("seq", "created_at", "published_at", "parked_at", "park_reason")
                .map(column -> outbox + "." + column).collect(Collectors.joining(",")));
        p.setProperty("snapshot.mode", "initial");
        p.setProperty("snapshot.select.statement.overrides", outbox);
        p.setProperty("snapshot.select.statement.overrides." + outbox, "SELECT * FROM " + outbox
                + " WHERE published_at IS NULL AND parked_at IS NULL ORDER BY seq");
        p.setProperty("heartbeat.interval.ms", Long.toString(settings.heartbeat().toMillis()));
        String beats = settings.schema() + ".once_relay_heartbeat";
        p.setProperty("heartbeat.action.query", "WITH previous AS (DELETE FROM " + beats + " WHERE slot_name = '"
                + settings.slotName() + "') INSERT INTO " + beats + " (slot_name, beat_at) VALUES ('" + settings.slotName()
                + "', now())");
        p.setProperty("tombstones.on.delete", "false");
        p.setProperty("max.batch.size", Integer.toString(batchSize(options)));
        p.setProperty("max.queue.size", Integer.toString(batchSize(options) * QUEUED_BATCHES));
        p.setProperty("poll.interval.ms", POLL_INTERVAL_MS);
        p.setProperty("errors.max.retries", "0");
        return p;
    }

    /**
     * The most change records the engine hands to one batch call, and so the most events one batch publishes: the
     * batch a stop interrupts is the most a restart publishes again.
     */
    public static int batchSize(RelayOptions options) {
        return Math.max(options.batchSize(), 512);
    }
}
