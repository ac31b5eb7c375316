package dev.once.relay;

import dev.once.spi.Backoff;
import dev.once.spi.OutboxLedger;
import dev.once.spi.RateLimitedLog;
import dev.once.spi.Waiter;
import dev.once.wire.OutboxMessage;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The relay for databases without logical replication. Each batch is one transaction: it takes the advisory locks of
 * the aggregates among the oldest pending rows that no other relay holds ({@link #LOCK_AGGREGATES}), reads those
 * aggregates' pending rows in {@code seq} order ({@link #CLAIM_ROWS}), publishes them, and deletes or marks them.
 * Several instances run side by side, and each runs {@link RelayOptions#workers()} batches at once the same way: an
 * aggregate belongs to one batch at a time, so its events stay in order, while the next batch takes the aggregates
 * after it. The rows are read by a second statement, with a snapshot taken after the locks: a relay may win an
 * aggregate's lock in the middle of step 1 just after another relay published its early rows and let it go, and only
 * a fresh snapshot shows those rows gone. (That is why a single {@code FOR UPDATE SKIP LOCKED} statement cannot
 * promise order: it may skip an aggregate's early row and take a later one.) A transaction is held only while its
 * batch is being acknowledged, which the transport bounds; when Kafka is unavailable the batch rolls back and the
 * relay backs off exponentially (a minute when Kafka refuses it: {@link KafkaRefusedException}), saying why in one log
 * line per reason and minute. An aggregate with a parked event waits behind it.
 */
public final class PollingRelay implements OutboxRelay {

    /** The advisory-lock namespace of aggregate locks (first key of {@code pg_try_advisory_xact_lock(int, int)}). */
    static final int AGGREGATE_LOCK_SPACE = 0x0CE0_0001;

    /** How many batches' worth of the oldest pending rows step 1 looks through for aggregates no other relay holds. */
    static final int LOOKAHEAD_BATCHES = 2;

    /**
     * Step 1: take the advisory locks of the aggregates of up to one batch of the oldest pending rows, skipping
     * aggregates with a parked event (before the window, so a parked aggregate never crowds the others out) and
     * aggregates another relay holds (so that while one relay publishes the oldest batch, the next takes the batch
     * after it). Holding an aggregate's lock is what entitles a relay to its rows. The lock is tried row by row as the
     * oldest rows are read, and the reading stops after {@link #LOOKAHEAD_BATCHES} batches' worth of candidates or one
     * batch taken, so a relay holds at most one batch's aggregates. Each row also carries the taken rows' last
     * {@code seq}, which bounds step 2.
     */
    static final String LOCK_AGGREGATES = """
            SELECT c.aggregate_type, c.aggregate_id, c.window_end
            FROM (SELECT aggregate_type, aggregate_id, min(seq) AS first_seq, max(max(seq)) OVER () AS window_end
                  FROM (SELECT aggregate_type, aggregate_id, seq
                        FROM (SELECT aggregate_type, aggregate_id, seq FROM outbox_event e
                              WHERE published_at IS NULL AND parked_at IS NULL
                                AND NOT EXISTS (SELECT 1 FROM outbox_event p
                                                WHERE p.parked_at IS NOT NULL
                                                  AND p.aggregate_type = e.aggregate_type
                                                  AND p.aggregate_id = e.aggregate_id)
                              ORDER BY seq
                              LIMIT ?) AS candidates
                        WHERE pg_try_advisory_xact_lock(?, hashtext(aggregate_type || '/' || aggregate_id))
                        LIMIT ?) AS taken
                  GROUP BY aggregate_type, aggregate_id) AS c
            ORDER BY c.first_seq
            """;

    /**
     * Step 2, a new statement and so a fresh snapshot: the pending rows of the locked aggregates up to the window's
     * end, in seq order. No other relay holds any of them, so none is skipped, and an aggregate's events leave in
     * order (its later rows follow in the next batch). An aggregate parked since step 1's snapshot is left out here:
     * a relay may win its lock just after another relay parked its early row and let it go, and only this snapshot
     * shows the park. Bounding the range by {@code seq} lets PostgreSQL read just the
     * window from the pending index instead of every pending row; {@link OutboxLedger#CUSTOM_PLANS} keeps it from
     * caching a generic plan that would probe the aggregate list row by row. No row locks are taken: the aggregate locks
     * already keep every other relay away, and locking thousands of rows per batch would only write to them.
     */
    static final String CLAIM_ROWS = """
            SELECT id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version,
                   payload, content_type, headers::text AS headers, created_at
            FROM outbox_event
            WHERE published_at IS NULL AND parked_at IS NULL AND seq <= ?
              AND (aggregate_type, aggregate_id) IN (SELECT * FROM unnest(CAST(? AS text[]), CAST(? AS text[])))
              AND NOT EXISTS (SELECT 1 FROM outbox_event p
                              WHERE p.parked_at IS NOT NULL
                                AND p.aggregate_type = outbox_event.aggregate_type
                                AND p.aggregate_id = outbox_event.aggregate_id)
            ORDER BY seq
            LIMIT ?
            """;

    /**
     * The pause after Kafka refused the relay ({@link KafkaRefusedException}: its credentials, its rights, or a topic
     * that does not exist): a configuration error, which lasts until someone changes the settings, the ACLs or the
     * topics, so the relay asks about once a minute rather than every few seconds.
     */
    static final Duration REFUSED_PAUSE = Duration.ofMinutes(1);

    private static final Logger log = LoggerFactory.getLogger(PollingRelay.class);

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final EventTransport transport;
    private final RelayOptions options;
    private final RelayListener listener;
    private final OutboxLedger ledger;
    private final String name;
    private final RateLimitedLog problems;
    private volatile boolean verified;
    private volatile RelayState state = new RelayState(RelayState.Status.STOPPED, "not started");
    private final List<Thread> workers = new java.util.ArrayList<>();
    private Waiter waiter;

    public PollingRelay(String name, DataSource dataSource, EventTransport transport, RelayOptions options,
                        RelayListener listener) {
        this.name = name;
        this.jdbc = new JdbcTemplate(dataSource);
        this.tx = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        this.transport = transport;
        this.options = options;
        this.listener = listener;
        this.ledger = new OutboxLedger(jdbc, options.retention());
        this.problems = new RateLimitedLog(log, "Polling relay " + name);
    }

    @Override
    public synchronized void start() {
        if (waiter != null && !waiter.stopped()) {
            return;
        }
        Waiter started = new Waiter();
        waiter = started;
        verified = false;
        state = new RelayState(RelayState.Status.STARTING, "connecting to Kafka");
        workers.clear();
        for (int i = 0; i < options.workers(); i++) {
            boolean verifier = i == 0;
            Thread worker = new Thread(() -> loop(verifier, started), "once-polling-relay-" + name + "-" + i);
            worker.setDaemon(true);
            worker.start();
            workers.add(worker);
        }
    }

    /** Publishes one batch in one transaction; returns how many rows it took. */
    int relayOnce() {
        Integer taken = tx.execute(status -> {
            jdbc.execute(OutboxLedger.CUSTOM_PLANS);
            List<String[]> aggregates = jdbc.query(LOCK_AGGREGATES,
                    (rs, n) -> new String[] {rs.getString(1), rs.getString(2), rs.getString(3)},
                    options.batchSize() * LOOKAHEAD_BATCHES, AGGREGATE_LOCK_SPACE, options.batchSize());
            if (aggregates.isEmpty()) {
                return 0;
            }
            List<OutboxMessage> batch = jdbc.query(CLAIM_ROWS, ps -> {
                ps.setLong(1, Long.parseLong(aggregates.get(0)[2]));
                ps.setArray(2, ps.getConnection().createArrayOf("text", aggregates.stream().map(a -> a[0]).toArray()));
                ps.setArray(3, ps.getConnection().createArrayOf("text", aggregates.stream().map(a -> a[1]).toArray()));
                ps.setInt(4, options.batchSize());
            }, (rs, n) -> message(rs));
            if (batch.isEmpty()) {
                return 0;
            }
            EventTransport.Delivery delivery = transport.send(batch);
            Instant acknowledgedAt = Instant.now();
            ledger.settle(delivery.acknowledged());
            ledger.park(delivery.refused());
            delivery.report(batch, acknowledgedAt, listener);
            return batch.size();
        });
        return taken == null ? 0 : taken;
    }

    /**
     * One worker's loop. Before the first batch, the {@code verifier} asks Kafka whether it answers and accepts the
     * relay's credentials ({@link EventTransport#verify}) while the others wait, so that a relay with nothing to
     * publish does not look healthy when it could publish nothing.
     */
    private void loop(boolean verifier, Waiter waiter) {
        Backoff backoff = new Backoff(options.backoffMin(), options.backoffMax());
        Duration pause = Duration.ZERO;
        try {
            while (waiter.pause(pause)) {
                try {
                    pause = options.idlePause();
                    if (!verified) {
                        if (!verifier) {
                            continue;
                        }
                        transport.verify();
                        verified = true;
                    }
                    int taken = relayOnce();
                    backoff.reset();
                    if (state.status() != RelayState.Status.RUNNING) {
                        state = new RelayState(RelayState.Status.RUNNING, "polling");
                        problems.resolved();
                    }
                    pause = taken == 0 ? options.idlePause() : Duration.ZERO;
                } catch (RuntimeException e) {
                    // Kafka or the database is unavailable (or a batch could not be read): keep the worker alive
                    Duration next = backoff.next();
                    pause = e instanceof KafkaRefusedException && REFUSED_PAUSE.compareTo(next) > 0 ? REFUSED_PAUSE : next;
                    state = new RelayState(RelayState.Status.BACKING_OFF, e.getMessage());
                    // WARN, never a trace: the reason names the fault and its fix (a refusal says which setting)
                    problems.report("backs off: " + e.getMessage(), e, RateLimitedLog.Kind.OUTAGE, pause);
                    listener.unavailable(e, pause);
                }
            }
            state = new RelayState(RelayState.Status.STOPPED, "stopped");
        } catch (RuntimeException | Error e) {
            state = new RelayState(RelayState.Status.FAILED, e.toString());
            log.error("Polling relay {} failed", name, e);
            listener.failed(e);
        }
    }

    private static OutboxMessage message(ResultSet rs) throws SQLException {
        String headers = rs.getString("headers");
        return new OutboxMessage(rs.getObject("id", UUID.class), rs.getString("tenant_id"), rs.getString("actor_id"),
                rs.getString("aggregate_type"), rs.getString("aggregate_id"), rs.getString("event_type"),
                rs.getInt("event_version"), rs.getBytes("payload"), rs.getString("content_type"),
                OutboxMessage.headersFromJson(headers),
                rs.getObject("created_at", java.time.OffsetDateTime.class).toInstant());
    }

    @Override
    public RelayState state() {
        return state;
    }

    @Override
    public void close() {
        List<Thread> stopping;
        synchronized (this) {
            if (waiter == null || waiter.stopped()) {
                return;
            }
            waiter.stop();
            stopping = List.copyOf(workers);
        }
        for (Thread worker : stopping) {
            Waiter.join(worker, Duration.ofSeconds(30));
            worker.interrupt(); // still in a batch after 30 s: Kafka does not answer; the batch rolls back
        }
    }
}
