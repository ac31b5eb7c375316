package dev.once.relay.cdc;

import dev.once.relay.EventTransport;
import dev.once.relay.OutboxMessage;
import dev.once.relay.OutboxRelay;
import dev.once.relay.RelayListener;
import dev.once.relay.RelayOptions;
import dev.once.relay.TransportUnavailableException;
import dev.once.relay.cdc.internal.JdbcOffsetBackingStore;
import dev.once.relay.internal.OutboxLedger;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The default relay: Debezium embedded reads committed outbox inserts from the write-ahead log ({@code pgoutput}) in
 * commit order and publishes them.
 * <ul>
 *   <li><b>One leader.</b> Of all instances, only the holder of a PostgreSQL advisory lock (on a dedicated connection)
 *       runs the engine; the others stand by and try again every {@code leaderPoll}. When the leader dies or loses its
 *       lock connection, it stops its engine at once and a standby takes over.</li>
 *   <li><b>Offsets in PostgreSQL</b> ({@link JdbcOffsetBackingStore}), committed after Kafka acknowledged the batch:
 *       a new leader resumes where the last one stopped. After a crash the last uncommitted batch is sent again.</li>
 *   <li><b>No gap at first start.</b> The publication covers inserts into the outbox and heartbeat tables only
 *       (deletes of published rows are never streamed back), and from PostgreSQL 15 only the outbox columns a message
 *       is made of ({@link #MESSAGE_COLUMNS}); the first start
 *       snapshots the rows still pending when the slot is created, so nothing committed earlier is lost.</li>
 *   <li><b>Heartbeat</b> rows keep the slot moving on a quiet database, so WAL does not pile up.</li>
 *   <li><b>Failures surface:</b> an engine failure is logged, reported to the listener and shown in {@link #state()},
 *       and the relay steps down and retries; it never stalls silently.</li>
 * </ul>
 */
public final class CdcRelay implements OutboxRelay {

    private static final Logger log = LoggerFactory.getLogger(CdcRelay.class);

    static final String PUBLICATION_EXISTS = "SELECT count(*) FROM pg_publication WHERE pubname = ?";
    static final String PUBLICATION_PUBLISHES_MORE =
            "SELECT count(*) FROM pg_publication WHERE pubname = ? AND (pubupdate OR pubdelete OR pubtruncate)";
    /**
     * The outbox columns a message is made of. From PostgreSQL 15 the publication lists exactly these, so the
     * bookkeeping columns (seq, created_at, published_at, parked_at, park_reason) are neither sent nor decoded.
     */
    static final String MESSAGE_COLUMNS = "id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, "
            + "event_version, payload, content_type, headers";
    /**
     * Whether the publication's outbox entry publishes other columns than {@link #MESSAGE_COLUMNS}: every column
     * (created before column lists), or the list of an earlier version (before content_type). Parameter 3: the
     * message columns, sorted.
     */
    static final String PUBLICATION_OTHER_COLUMNS = """
            SELECT count(*) FROM pg_publication_tables
            WHERE pubname = ? AND schemaname = ? AND tablename = 'outbox_event'
              AND (SELECT array_agg(a::text ORDER BY a::text) FROM unnest(attnames) AS a) IS DISTINCT FROM CAST(? AS text[])
            """;
    static final String SERVER_VERSION = "SELECT current_setting('server_version_num')::int";
    /**
     * A batch's bookkeeping (deleting or marking what Kafka acknowledged, parking what it refused) commits without
     * waiting for the disk. The write-ahead log, not the row, is this relay's record of what is still to send: the
     * offsets that move past the batch commit synchronously after it, and flushing them flushes the bookkeeping too
     * (the log is written in order). A crash before that loses both, and the batch is sent again.
     */
    static final String ASYNC_COMMIT = "SET LOCAL synchronous_commit = off";
    /** How long the ids of published rows not yet visible are kept for deletion with the next batches. */
    static final Duration UNSETTLED_FOR = Duration.ofSeconds(60);
    static final String SLOT_ACTIVE = "SELECT count(*) FROM pg_replication_slots WHERE slot_name = ? AND active";
    static final String PARKED_AGGREGATES = """
            SELECT DISTINCT aggregate_type || '/' || aggregate_id FROM outbox_event
            WHERE parked_at IS NOT NULL AND aggregate_type || '/' || aggregate_id = ANY(?)
            """;
    static final String PARK_BEHIND = "UPDATE outbox_event SET parked_at = now(), park_reason = ? WHERE id = ?";

    private final String name;
    private final CdcSettings settings;
    private final DataSource dataSource;
    private final JdbcTemplate jdbc;
    private final EventTransport transport;
    private final RelayOptions options;
    private final RelayListener listener;
    private final OutboxLedger ledger;
    private final TransactionTemplate bookkeepingTx;
    /** Published events whose rows were not yet visible to the delete, and since when (engine thread only). */
    private final Map<UUID, Long> unsettled = new LinkedHashMap<>();
    private final ExecutorService engineThread = Executors.newSingleThreadExecutor(r -> daemon(r, "once-cdc-engine"));
    private final ExecutorService electionThread = Executors.newSingleThreadExecutor(r -> daemon(r, "once-cdc-election"));

    private volatile boolean running;
    private volatile boolean leader;
    private volatile Throwable engineFailure;
    private volatile RelayState state = new RelayState(RelayState.Status.STOPPED, "not started");
    private DebeziumEngine<RecordChangeEvent<SourceRecord>> engine;

    public CdcRelay(String name, DataSource dataSource, CdcSettings settings, EventTransport transport,
                    RelayOptions options, RelayListener listener) {
        this.name = name;
        this.dataSource = dataSource;
        this.settings = settings;
        this.jdbc = new JdbcTemplate(dataSource);
        this.transport = transport;
        this.options = options;
        this.listener = listener;
        this.ledger = new OutboxLedger(jdbc, options);
        this.bookkeepingTx = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
    }

    /**
     * Starts the election loop and returns once this instance is either the leader with an active replication slot or
     * a standby.
     */
    @Override
    public synchronized void start() {
        if (running) {
            return;
        }
        running = true;
        state = new RelayState(RelayState.Status.STARTING, "electing");
        ensurePublication();
        java.util.concurrent.CountDownLatch decided = new java.util.concurrent.CountDownLatch(1);
        electionThread.submit(() -> elect(decided));
        try {
            decided.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Whether this instance currently runs the engine. */
    boolean isLeader() {
        return leader;
    }

    private void elect(java.util.concurrent.CountDownLatch decided) {
        Duration backoff = Duration.ZERO;
        try (LeaderLock lock = new LeaderLock(settings)) {
            while (running) {
                try {
                    if (!leader && lock.tryAcquire()) {
                        lead();
                        backoff = Duration.ZERO;
                    } else if (!leader) {
                        state = new RelayState(RelayState.Status.STANDBY, "another instance leads " + settings.slotName());
                    } else if (lock.stillHeld() && engineFailure == null) {
                        cleanupIfDue();
                    } else {
                        String why = engineFailure != null ? "engine failed: " + engineFailure : "lost the leader lock";
                        log.error("CDC relay {} steps down: {}", name, why);
                        stepDown(lock);
                        state = new RelayState(RelayState.Status.FAILED, why);
                        backoff = OutboxLedger.nextBackoff(backoff, options);
                        LockSupport.parkNanos(backoff.toNanos());
                    }
                } catch (Exception e) {
                    log.warn("CDC relay {} election failed: {}", name, e.toString());
                    state = new RelayState(RelayState.Status.BACKING_OFF, e.toString());
                    stepDown(lock);
                }
                decided.countDown();
                LockSupport.parkNanos(settings.leaderPoll().toNanos());
            }
            stepDown(lock);
        }
    }

    private long nextCleanup = System.nanoTime();

    /** The leader deletes published rows past the retention period, in bounded batches, every 10 seconds. */
    private void cleanupIfDue() {
        if (System.nanoTime() - nextCleanup >= 0) {
            try {
                ledger.cleanup();
            } catch (RuntimeException e) {
                log.warn("CDC relay {} retention cleanup failed: {}", name, e.toString());
            }
            nextCleanup = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        }
    }

    private void lead() {
        engineFailure = null;
        leader = true;
        JdbcOffsetBackingStore.register(settings.slotName(), dataSource);
        engine = DebeziumEngine.create(ChangeEventFormat.of(io.debezium.embedded.Connect.class))
                .using(engineProperties())
                .notifying(this::handleBatch)
                .using((success, message, error) -> {
                    if (!success && running && leader) {
                        engineFailure = error != null ? error : new IllegalStateException(message);
                        log.error("CDC engine of {} stopped: {}", name, message, error);
                        listener.failed(engineFailure);
                    }
                })
                .build();
        engineThread.submit(engine);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (running && engineFailure == null && !slotActive()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("replication slot " + settings.slotName() + " did not become active");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
        if (engineFailure != null) {
            throw new IllegalStateException("CDC engine failed to start", engineFailure);
        }
        state = new RelayState(RelayState.Status.RUNNING, "leading slot " + settings.slotName());
        log.info("CDC relay {} leads slot {}", name, settings.slotName());
    }

    private void stepDown(LeaderLock lock) {
        DebeziumEngine<?> current = engine;
        engine = null;
        if (current != null) {
            try {
                current.close();
            } catch (Exception e) {
                log.warn("Closing the CDC engine of {} failed", name, e);
            }
        }
        leader = false;
        lock.close();
    }

    private boolean slotActive() {
        Long n = jdbc.queryForObject(SLOT_ACTIVE, Long.class, settings.slotName());
        return n != null && n > 0;
    }

    private void ensurePublication() {
        boolean columnLists = columnListsSupported();
        Long exists = jdbc.queryForObject(PUBLICATION_EXISTS, Long.class, settings.publicationName());
        if (exists == null || exists == 0) {
            try {
                // inserts only: deletes of published rows and updates that park rows are never streamed back
                jdbc.execute("CREATE PUBLICATION " + settings.publicationName() + " FOR TABLE "
                        + publishedTables(columnLists) + " WITH (publish = 'insert')");
            } catch (org.springframework.dao.DataAccessException e) {
                Long now = jdbc.queryForObject(PUBLICATION_EXISTS, Long.class, settings.publicationName());
                if (now == null || now == 0) {
                    throw e; // not a race with another instance (e.g. no permission): say so
                }
            }
        }
        if (columnLists) {
            String[] columns = Stream.of(MESSAGE_COLUMNS.split(",")).map(String::strip).sorted().toArray(String[]::new);
            Long otherColumns = jdbc.query(PUBLICATION_OTHER_COLUMNS, ps -> {
                ps.setString(1, settings.publicationName());
                ps.setString(2, settings.schema());
                ps.setArray(3, ps.getConnection().createArrayOf("text", columns));
            }, rs -> rs.next() ? rs.getLong(1) : 0L);
            if (otherColumns != null && otherColumns > 0) {
                log.info("Publication {} narrowed to the outbox columns a message is made of", settings.publicationName());
                jdbc.execute("ALTER PUBLICATION " + settings.publicationName() + " SET TABLE " + publishedTables(true));
            }
        }
        Long broader = jdbc.queryForObject(PUBLICATION_PUBLISHES_MORE, Long.class, settings.publicationName());
        if (broader != null && broader > 0) {
            log.warn("Publication {} also publishes updates or deletes; narrowing it to inserts", settings.publicationName());
            jdbc.execute("ALTER PUBLICATION " + settings.publicationName() + " SET (publish = 'insert')");
        }
    }

    private boolean columnListsSupported() {
        Integer version = jdbc.queryForObject(SERVER_VERSION, Integer.class);
        return version != null && version >= 150_000;
    }

    private String publishedTables(boolean columnLists) {
        String outbox = settings.schema() + ".outbox_event";
        return (columnLists ? outbox + " (" + MESSAGE_COLUMNS + ")" : outbox) + ", " + settings.schema()
                + ".once_relay_heartbeat";
    }

    private Properties engineProperties() {
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
        p.setProperty("topic.prefix", "once");
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
        p.setProperty("max.batch.size", Integer.toString(engineBatchSize(options)));
        p.setProperty("max.queue.size", Integer.toString(engineBatchSize(options) * 4));
        p.setProperty("poll.interval.ms", "5");
        p.setProperty("errors.max.retries", "0");
        return p;
    }

    /**
     * The most change records the engine hands to one {@link #handleBatch} call, and so the most events one batch
     * publishes: the batch a stop interrupts is the most a restart publishes again.
     */
    static int engineBatchSize(RelayOptions options) {
        return Math.max(options.batchSize(), 512);
    }

    private void handleBatch(List<RecordChangeEvent<SourceRecord>> records,
                             DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer)
            throws InterruptedException {
        List<OutboxMessage> messages = new ArrayList<>();
        for (RecordChangeEvent<SourceRecord> event : records) {
            OutboxMessage message = toMessage(event.record());
            if (message != null) {
                messages.add(message);
            }
        }
        if (!messages.isEmpty()) {
            publish(holdBehindParked(messages));
        } else if (!unsettled.isEmpty()) {
            bookkeeping(Set::of);
        }
        for (RecordChangeEvent<SourceRecord> event : records) {
            committer.markProcessed(event);
        }
        committer.markBatchFinished();
    }

    private void publish(List<OutboxMessage> messages) throws InterruptedException {
        Duration backoff = Duration.ZERO;
        while (true) {
            try {
                EventTransport.Delivery delivery = transport.send(messages);
                bookkeeping(() -> {
                    Set<UUID> acknowledged = new HashSet<>(delivery.acknowledged());
                    for (OutboxMessage m : messages) {
                        // held back by the transport behind a refused event of its aggregate: CDC will not see it again
                        if (!acknowledged.contains(m.id()) && !delivery.refused().containsKey(m.id())) {
                            jdbc.update(PARK_BEHIND, "waiting behind a parked event of " + m.aggregate(), m.id());
                        }
                    }
                    return ledger.record(messages, delivery, listener);
                });
                state = new RelayState(RelayState.Status.RUNNING, "leading slot " + settings.slotName());
                return;
            } catch (TransportUnavailableException e) {
                if (!running || !leader) {
                    throw new InterruptedException("relay stopping while Kafka is unavailable");
                }
                backoff = OutboxLedger.nextBackoff(backoff, options);
                state = new RelayState(RelayState.Status.BACKING_OFF, e.getMessage());
                log.warn("CDC relay {} backs off {} ms: {}", name, backoff.toMillis(), e.getMessage());
                listener.unavailable(e, backoff);
                Thread.sleep(backoff.toMillis());
            }
        }
    }

    /**
     * A batch's bookkeeping in one transaction, committed asynchronously ({@link #ASYNC_COMMIT}) with custom plans:
     * {@code work} returns the ids of published events whose rows it did not find, and the ids still unsettled from
     * earlier batches are tried again with it.
     */
    private void bookkeeping(Supplier<Set<UUID>> work) {
        bookkeepingTx.executeWithoutResult(status -> {
            jdbc.execute(ASYNC_COMMIT + "; " + OutboxLedger.CUSTOM_PLANS);
            Set<UUID> notFound = new HashSet<>(work.get());
            if (!unsettled.isEmpty()) {
                notFound.addAll(ledger.settle(unsettled.keySet()));
            }
            settleLater(notFound);
        });
    }

    /**
     * Keeps the ids of published events whose rows were not found, to delete them with the next batches: a row just
     * committed may not be visible yet ({@link OutboxLedger#settle}). An id still not found after
     * {@link #UNSETTLED_FOR} belonged to a row that was already gone (an event streamed again after a restart). Only
     * bookkeeping rests on this map: if it is lost, such a row stays pending although it was published, and is
     * published again if the slot is ever created anew; consumers skip the duplicate by its event id.
     */
    private void settleLater(Set<UUID> notFound) {
        long now = System.nanoTime();
        unsettled.keySet().removeIf(id -> !notFound.contains(id));
        for (UUID id : notFound) {
            unsettled.putIfAbsent(id, now);
        }
        unsettled.values().removeIf(since -> now - since > UNSETTLED_FOR.toNanos());
    }

    /** Events of an aggregate that has a parked event are parked behind it, so the aggregate keeps its order. */
    private List<OutboxMessage> holdBehindParked(List<OutboxMessage> messages) {
        Object[] aggregates = messages.stream().map(OutboxMessage::aggregate).distinct().toArray();
        List<String> parked = jdbc.query(PARKED_AGGREGATES, ps -> ps.setArray(1,
                ps.getConnection().createArrayOf("text", aggregates)), (rs, n) -> rs.getString(1));
        if (parked.isEmpty()) {
            return messages;
        }
        List<OutboxMessage> free = new ArrayList<>(messages.size());
        for (OutboxMessage m : messages) {
            if (parked.contains(m.aggregate())) {
                jdbc.update(PARK_BEHIND, "waiting behind a parked event of " + m.aggregate(), m.id());
            } else {
                free.add(m);
            }
        }
        return free;
    }

    private OutboxMessage toMessage(SourceRecord record) {
        if (!(record.value() instanceof Struct value) || value.schema().field("op") == null) {
            return null; // heartbeats and other control records
        }
        String op = value.getString("op");
        Struct source = value.getStruct("source");
        if (!("c".equals(op) || "r".equals(op)) || !"outbox_event".equals(source.getString("table"))) {
            return null;
        }
        Struct row = value.getStruct("after");
        String headers = row.getString("headers");
        return new OutboxMessage(UUID.fromString(row.getString("id")), row.getString("tenant_id"),
                row.getString("actor_id"), row.getString("aggregate_type"), row.getString("aggregate_id"),
                row.getString("event_type"), row.getInt32("event_version"), row.getBytes("payload"),
                row.getString("content_type"), OutboxLedger.headersFromJson(headers),
                source.getInt64("ts_ms") == null ? null : java.time.Instant.ofEpochMilli(source.getInt64("ts_ms")));
    }

    @Override
    public RelayState state() {
        return state;
    }

    @Override
    public void close() {
        synchronized (this) {
            if (!running) {
                return;
            }
            running = false;
        }
        electionThread.shutdown();
        try {
            electionThread.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        engineThread.shutdownNow();
        state = new RelayState(RelayState.Status.STOPPED, "stopped");
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }
}
