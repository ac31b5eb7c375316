package dev.once.relay.cdc.internal;

import dev.once.relay.RelayOptions;
import dev.once.relay.cdc.CdcSettings;
import java.util.List;
import java.util.Properties;
import java.util.stream.Collectors;

/**
 * The Debezium engine configuration of a CDC relay: one place, for the relay and for the benchmark that measures the
 * engine on its own (the floor of the relay's latency). Not API.
 */
public final class EngineProperties {

    /** How often the engine polls Debezium's queue when it finds it empty. */
    static final String POLL_INTERVAL_MS = "5";
    /** Debezium's queue holds this many engine batches, so decoding goes on while a batch is published. */
    static final int QUEUED_BATCHES = 4;
    /** The outbox's bookkeeping columns, never in a message (nor, from PostgreSQL 15, in the publication). */
    public static final List<String> BOOKKEEPING_COLUMNS = List.of("seq", "created_at", "published_at", "parked_at",
            "park_reason", "xact_id");
    /** The prefix of the heartbeat's logical messages, which Debezium reads for their position and emits no record of. */
    public static final String HEARTBEAT_PREFIX = "once-heartbeat";
    /**
     * What Debezium runs at every heartbeat: a logical message into the WAL, which needs no privilege on any table.
     * Decoded, it moves Debezium's position; the heartbeat record after it carries that position to the offsets, and
     * the offsets to the slot, so that a quiet outbox does not hold WAL back.
     */
    public static final String HEARTBEAT_QUERY = "SELECT pg_logical_emit_message(false, '" + HEARTBEAT_PREFIX + "', '')";

    /** Debezium's default, stated: the slot is confirmed only up to offsets Debezium has stored. */
    public static final String LSN_FLUSH_MODE = "connector";

    /**
     * The snapshot, when the slot is new or the offsets do not fit it: the rows not known to be published (the
     * watermarks mark or delete the rest) and not parked, in the order they were appended.
     */
    public static String snapshotSelect(String schema) {
        return "SELECT * FROM " + schema + ".outbox_event WHERE published_at IS NULL AND parked_at IS NULL ORDER BY seq";
    }

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
        p.setProperty("table.include.list", outbox);
        // Only what a message is made of: the relay bookkeeping columns (and their timestamp parsing) stay out.
        p.setProperty("column.exclude.list", BOOKKEEPING_COLUMNS.stream().map(column -> outbox + "." + column)
                .collect(Collectors.joining(",")));
        // A snapshot when there are no offsets, and when they point where the slot no longer goes (a slot created
        // anew): never a resumption from offsets of another slot.
        p.setProperty("snapshot.mode", "when_needed");
        p.setProperty("snapshot.select.statement.overrides", outbox);
        p.setProperty("snapshot.select.statement.overrides." + outbox, snapshotSelect(settings.schema()));
        p.setProperty("heartbeat.interval.ms", Long.toString(settings.heartbeat().toMillis()));
        p.setProperty("heartbeat.action.query", HEARTBEAT_QUERY);
        p.setProperty("message.prefix.exclude.list", HEARTBEAT_PREFIX);
        // The slot moves only to offsets Debezium stored, never to a keepalive's position on the driver's own: the
        // watermarks take a confirmed position for published (dev.once.spi.SlotWatermarks).
        p.setProperty("lsn.flush.mode", LSN_FLUSH_MODE);
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
