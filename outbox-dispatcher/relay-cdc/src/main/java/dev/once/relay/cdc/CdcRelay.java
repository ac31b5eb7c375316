package dev.once.relay.cdc;

import dev.once.OnceConfigurationException;
import dev.once.internal.TransientFailures;
import dev.once.relay.EventTransport;
import dev.once.relay.OutboxChangeEvents;
import dev.once.relay.OutboxMessage;
import dev.once.relay.OutboxRelay;
import dev.once.relay.RelayListener;
import dev.once.relay.RelayOptions;
import dev.once.relay.TransportUnavailableException;
import dev.once.relay.cdc.internal.EngineProperties;
import dev.once.relay.cdc.internal.JdbcOffsetBackingStore;
import dev.once.relay.cdc.internal.PostgresCoordinates;
import dev.once.relay.internal.OutboxLedger;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The default relay: Debezium embedded reads committed outbox inserts from the write-ahead log ({@code pgoutput}) in
 * commit order and publishes them.
 * <ul>
 *   <li><b>One leader.</b> Of all instances, only the holder of a PostgreSQL advisory lock (on a dedicated connection)
 *       runs the engine; the others stand by and try again every {@code leaderPoll}. When the leader dies or loses its
 *       lock connection, it stops its engine at once and a standby takes over.</li>
 *   <li><b>Preflight.</b> Before it starts the engine, a new leader checks with plain SQL what would otherwise fail
 *       inside Debezium ({@link CdcPreflight}: wal_level, the REPLICATION privilege, the publication, the slot's
 *       database, free slots) and turns each into one {@link dev.once.OnceConfigurationException} naming the fix.</li>
 *   <li><b>Bookkeeping off the publishing path.</b> Once Kafka has acknowledged a batch, its bookkeeping (deleting
 *       or marking the rows, parking what Kafka refused) runs on a thread of its own while the next batches are
 *       published, up to {@link CdcSettings#aheadOfBookkeeping()} batches ahead: PostgreSQL keeping writes waiting
 *       (a checkpoint) does not hold up publishing.</li>
 *   <li><b>Offsets in PostgreSQL</b> ({@link JdbcOffsetBackingStore}), moved past a batch only once Kafka acknowledged
 *       it and its bookkeeping committed, and saved only on the server the engine started on: a new leader resumes
 *       where the last one stopped. After a crash, the batches not so recorded are sent again.</li>
 *   <li><b>No gap at first start.</b> The publication covers inserts into the outbox and heartbeat tables only
 *       ({@link CdcPublication}); the first start snapshots the rows still pending when the slot is created, so
 *       nothing committed earlier is lost.</li>
 *   <li><b>Heartbeat</b> rows keep the slot moving on a quiet database, so WAL does not pile up.</li>
 *   <li><b>Failures surface, once:</b> a leader that cannot lead (a misconfiguration, an engine failure, a lost
 *       connection) steps down, shows why in {@link #state()} (FAILED, or BACKING_OFF while PostgreSQL is out of
 *       reach), reports it to the listener and retries, pausing {@code retryFirst} doubling to {@code retryMax}; the
 *       log says it once and then at most once a minute ({@link ProblemLog}). With {@code failFast}, a lasting
 *       misconfiguration found by the first attempt fails {@link #start()} instead.</li>
 * </ul>
 */
public final class CdcRelay implements OutboxRelay {

    private static final Logger log = LoggerFactory.getLogger(CdcRelay.class);


    /**
     * A batch's bookkeeping (deleting or marking what Kafka acknowledged, parking what it refused) commits without
     * waiting for the disk. The write-ahead log, not the row, is this relay's record of what is still to send: the
     * offsets that move past the batch commit synchronously after it ({@link JdbcOffsetBackingStore#SYNCHRONOUS}), and
     * flushing them flushes the bookkeeping too (the log is written in order), provided the server has not restarted
     * in between: the offsets are saved only on the server the engine started on. A crash before that loses both, and
     * the batch is sent again.
     */
    static final String ASYNC_COMMIT = "SET LOCAL synchronous_commit = off";
    /**
     * A bookkeeping that settles rows of earlier batches ({@link #settleLater}) commits waiting for the disk: those
     * batches' offsets have moved on, so nothing streams their events again, and the relay forgets their ids only once
     * their settling is durable.
     */
    static final String SYNC_COMMIT = JdbcOffsetBackingStore.SYNCHRONOUS;
    /** How long the ids of published rows not yet visible are kept for deletion with the next batches. */
    static final Duration UNSETTLED_FOR = Duration.ofSeconds(60);
    static final String SLOT_ACTIVE = "SELECT count(*) FROM pg_replication_slots WHERE slot_name = ? AND active";
    static final String PARKED_AGGREGATES = """
            SELECT DISTINCT aggregate_type || '/' || aggregate_id FROM outbox_event
            WHERE parked_at IS NOT NULL AND aggregate_type || '/' || aggregate_id = ANY(?)
            """;
    /**
     * How long after its submission a batch's bookkeeping is waited for once the engine has caught up: healthy
     * bookkeeping is done well within it, so the offsets keep up and a stop after a burst sends nothing again;
     * bookkeeping that PostgreSQL keeps waiting longer is not waited for, and the next batches are published.
     */
    static final Duration CAUGHT_UP_WAIT = Duration.ofMillis(100);
    /** How long {@link #start()} waits for the first attempt to lead (or to stand by) to finish. */
    static final Duration START_WAIT = Duration.ofSeconds(60);
    /** How long a new leader waits for its engine to take the replication slot. */
    static final Duration SLOT_WAIT = Duration.ofSeconds(60);

    private final String name;
    private final CdcSettings settings;
    private final DataSource dataSource;
    private final JdbcTemplate jdbc;
    private final EventTransport transport;
    private final RelayOptions options;
    private final RelayListener listener;
    private final OutboxLedger ledger;
    private final TransactionTemplate bookkeepingTx;
    private final ProblemLog problems;
    /** Published events whose rows were not yet visible to the delete, and since when (bookkeeping thread only). */
    private final Map<UUID, Long> unsettled = new LinkedHashMap<>();
    /** The batches published whose offsets have not moved yet, oldest first (engine thread only). */
    private final Deque<Recording> recording = new ArrayDeque<>();
    /** Records each batch's bookkeeping in order, off the publishing thread. */
    private final ExecutorService bookkeeper = Executors.newSingleThreadExecutor(
            r -> daemon(r, "once-cdc-bookkeeping"));
    private final ExecutorService engineThread = Executors.newSingleThreadExecutor(r -> daemon(r, "once-cdc-engine"));
    private final ExecutorService electionThread = Executors.newSingleThreadExecutor(r -> daemon(r, "once-cdc-election"));
    /** Counted down by {@link #close()}: ends the election thread's pauses at once. */
    private final CountDownLatch stopping = new CountDownLatch(1);

    private volatile boolean running;
    private volatile boolean leader;
    private volatile Throwable engineFailure;
    /** A lasting misconfiguration found by the first attempt, which {@link #start()} throws with {@code failFast}. */
    private volatile OnceConfigurationException startFailure;
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
        this.problems = new ProblemLog(log, name);
    }

    /**
     * Starts the election loop and returns once the first attempt is over: this instance leads with an active
     * replication slot, stands by, or could not lead and retries (its {@link #state()} says why).
     *
     * @throws OnceConfigurationException with {@code failFast}, when the first attempt found a misconfiguration that
     *         only an operator can fix (wal_level, the REPLICATION privilege, the publication, a slot of another
     *         database); the relay is closed then
     */
    @Override
    public synchronized void start() {
        if (running) {
            return;
        }
        running = true;
        state = new RelayState(RelayState.Status.STARTING, "electing");
        CountDownLatch decided = new CountDownLatch(1);
        electionThread.submit(() -> elect(decided));
        try {
            decided.await(START_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        OnceConfigurationException failure = startFailure;
        if (failure != null) {
            close();
            state = new RelayState(RelayState.Status.FAILED, failure.getMessage());
            throw failure;
        }
    }

    /** Whether this instance currently runs the engine. */
    boolean isLeader() {
        return leader;
    }

    private void elect(CountDownLatch decided) {
        boolean first = true;
        Duration retry = Duration.ZERO;
        try (LeaderLock lock = new LeaderLock(settings)) {
            while (running) {
                Duration pause = settings.leaderPoll();
                try {
                    if (!leader && lock.tryAcquire()) {
                        CdcPreflight.Finding finding = lead();
                        if (finding == null) {
                            retry = Duration.ZERO;
                            problems.resolved();
                        } else {
                            stepDown(lock);
                            if (first && settings.failFast() && finding.lasting()) {
                                startFailure = finding.error(); // start() throws it: said once, by the application
                                return;
                            }
                            retry = nextRetry(retry);
                            listener.failed(finding.error());
                            cannotLead(finding.error().getMessage(), finding.error(), ProblemLog.Kind.MISCONFIGURATION,
                                    retry);
                            pause = retry;
                        }
                    } else if (!leader) {
                        state = new RelayState(RelayState.Status.STANDBY, "another instance leads " + settings.slotName());
                    } else if (!lock.stillHeld() || engineFailure != null) {
                        Throwable failure = engineFailure;
                        stepDown(lock);
                        retry = nextRetry(retry);
                        if (failure != null) {
                            failedToLead(failure, true, retry);
                        } else {
                            cannotLead("The CDC relay lost its leader lock connection to PostgreSQL", null,
                                    ProblemLog.Kind.OUTAGE, retry);
                        }
                        pause = retry;
                    }
                } catch (Exception e) {
                    Throwable failure = engineFailure;
                    stepDown(lock);
                    retry = nextRetry(retry);
                    failedToLead(failure != null ? failure : e, failure != null, retry);
                    pause = retry;
                } finally {
                    first = false;
                    decided.countDown();
                }
                pause(pause);
            }
            stepDown(lock);
        }
    }

    private Duration nextRetry(Duration current) {
        Duration doubled = current.isZero() ? settings.retryFirst() : current.multipliedBy(2);
        return doubled.compareTo(settings.retryMax()) > 0 ? settings.retryMax() : doubled;
    }

    /** Shows why the relay does not lead and logs it, at most once a minute while it stays the same. */
    private void cannotLead(String summary, Throwable cause, ProblemLog.Kind kind, Duration retryIn) {
        RelayState.Status status = kind == ProblemLog.Kind.OUTAGE ? RelayState.Status.BACKING_OFF
                : RelayState.Status.FAILED;
        state = new RelayState(status, summary + " (next attempt in " + ProblemLog.seconds(retryIn) + " s)");
        problems.report(summary, cause, kind, retryIn);
    }

    /**
     * An engine failure, or a failure to elect or check before it: PostgreSQL out of reach passes by itself (an outage,
     * BACKING_OFF); anything else nobody foresaw is summarised by its deepest cause (FAILURE).
     */
    private void failedToLead(Throwable failure, boolean engine, Duration retry) {
        boolean outage = TransientFailures.isTransient(failure);
        String summary = engine ? "The CDC engine of slot " + settings.slotName() + " stopped: " + innermost(failure)
                : outage ? "The CDC relay cannot reach PostgreSQL at " + where() + " as " + settings.user() + ": "
                + innermost(failure)
                : "The CDC relay failed before it could lead slot " + settings.slotName() + ": " + innermost(failure);
        cannotLead(summary, failure, outage ? ProblemLog.Kind.OUTAGE : ProblemLog.Kind.FAILURE, retry);
    }

    /** The deepest cause's message, with its SQLState when PostgreSQL gave one: what an operator can act on. */
    static String innermost(Throwable failure) {
        Throwable deepest = failure;
        String sqlState = null;
        int depth = 0;
        for (Throwable t = failure; t != null && depth++ < 20; t = t.getCause()) {
            if (t instanceof SQLException sql && sql.getSQLState() != null) {
                sqlState = sql.getSQLState();
            }
            if (t.getMessage() != null) {
                deepest = t;
            }
        }
        String message = deepest.getMessage() == null ? deepest.getClass().getName() : deepest.getMessage();
        return message + (sqlState == null ? "" : " (SQLState " + sqlState + ")");
    }

    private String where() {
        PostgresCoordinates db = PostgresCoordinates.fromJdbcUrl(settings.jdbcUrl());
        return db.host() + ":" + db.port() + "/" + db.database(); // the URL itself may carry a password
    }

    private void pause(Duration pause) {
        try {
            stopping.await(pause.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        }
    }

    /**
     * Leads: the preflight, then the engine, until its slot is active. Returns the misconfiguration the preflight found
     * (the engine not started), or null once the engine streams; an engine that fails while starting is thrown.
     */
    private CdcPreflight.Finding lead() {
        engineFailure = null;
        recording.clear(); // batches of an engine that stopped: streamed again from the stored offsets
        leader = true;
        CdcPreflight.Finding finding = preflight();
        if (finding != null) {
            return finding;
        }
        JdbcOffsetBackingStore.register(settings.slotName(), dataSource);
        engine = DebeziumEngine.create(ChangeEventFormat.of(io.debezium.embedded.Connect.class))
                .using(EngineProperties.of(settings, options))
                .notifying(this::handleBatch)
                .using((success, message, error) -> {
                    if (!success && running && leader) {
                        engineFailure = error != null ? error : new IllegalStateException(message);
                        listener.failed(engineFailure); // logged by the election loop, once
                    }
                })
                .build();
        engineThread.submit(engine);
        long deadline = System.nanoTime() + SLOT_WAIT.toNanos();
        while (running && engineFailure == null && !slotActive()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("replication slot " + settings.slotName() + " did not become active "
                        + "within " + SLOT_WAIT.toSeconds() + " s");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
        if (engineFailure != null) {
            throw new IllegalStateException("CDC engine failed to start", engineFailure);
        }
        state = new RelayState(RelayState.Status.RUNNING, "leading slot " + settings.slotName());
        log.info("CDC relay {} leads slot {}", name, settings.slotName());
        return null;
    }

    /** The preflight on a connection of the role Debezium connects as, which may differ from the DataSource's. */
    private CdcPreflight.Finding preflight() {
        SingleConnectionDataSource own = new SingleConnectionDataSource(settings.jdbcUrl(), settings.user(),
                settings.password(), true);
        try {
            return new CdcPreflight(new JdbcTemplate(own), settings).check();
        } finally {
            own.destroy();
        }
    }

    private void stepDown(LeaderLock lock) {
        DebeziumEngine<?> current = engine;
        engine = null;
        if (current != null) {
            try {
                current.close();
            } catch (Exception e) {
                if (engineFailure == null) {
                    log.warn("Closing the CDC engine of {} failed", name, e);
                } else { // a failed engine has shut itself down already
                    log.debug("Closing the failed CDC engine of {}: {}", name, e.toString());
                }
            }
        }
        leader = false;
        lock.close();
    }

    private boolean slotActive() {
        Long n = jdbc.queryForObject(SLOT_ACTIVE, Long.class, settings.slotName());
        return n != null && n > 0;
    }

    /**
     * One engine batch: its events are published at once and its bookkeeping is handed to the bookkeeping thread;
     * the offsets move past it only once that bookkeeping has committed ({@link #markRecorded}).
     */
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
        if (messages.isEmpty()) {
            Recording last = recording.pollLast();
            // its offsets move with the batch before it, whose bookkeeping settles the rows not found yet anyway
            recording.add(last != null ? last.and(records) : new Recording(records, Set.of(),
                    bookkeeper.submit(this::settleEarlier), System.nanoTime()));
        } else {
            Set<String> parked = parkedAggregates(messages);
            EventTransport.Delivery delivery = publish(messages.stream().filter(m -> !parked.contains(m.aggregate()))
                    .toList());
            Instant acknowledgedAt = Instant.now();
            Set<UUID> acknowledged = new HashSet<>(delivery.acknowledged());
            // held back behind a parked or refused event of its aggregate: CDC will not see it again
            List<OutboxMessage> behind = messages.stream()
                    .filter(m -> !acknowledged.contains(m.id()) && !delivery.refused().containsKey(m.id())).toList();
            Set<String> parking = messages.stream().filter(m -> !acknowledged.contains(m.id()))
                    .map(OutboxMessage::aggregate).collect(Collectors.toSet());
            recording.add(new Recording(records, parking, bookkeeper.submit(() -> bookkeeping(() -> {
                for (OutboxMessage m : behind) {
                    jdbc.update(OutboxLedger.PARK, "waiting behind a parked event of " + m.aggregate(), m.id());
                }
                return ledger.record(messages, delivery, acknowledgedAt, listener);
            })), System.nanoTime()));
        }
        markRecorded(committer, records.size() < EngineProperties.batchSize(options));
    }

    /**
     * Moves the offsets past every batch whose bookkeeping has committed, oldest first, and never past one that has
     * not: a batch whose refused events are not parked yet is streamed again after a crash. It waits for the oldest
     * batch while more than {@link CdcSettings#aheadOfBookkeeping()} batches' worth of records are being recorded,
     * and, when the engine has caught up (a batch short of the engine's batch size), for each batch until
     * {@link #CAUGHT_UP_WAIT} after its submission. A bookkeeping failure fails the engine, which then resumes from
     * the last offsets.
     */
    private void markRecorded(DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer,
                              boolean caughtUp) throws InterruptedException {
        int most = settings.aheadOfBookkeeping() * EngineProperties.batchSize(options);
        while (!recording.isEmpty()) {
            Recording oldest = recording.peek();
            try {
                if (recording.stream().mapToInt(batch -> batch.records().size()).sum() > most) {
                    oldest.recorded().get();
                } else if (caughtUp) {
                    long left = oldest.submittedAt() + CAUGHT_UP_WAIT.toNanos() - System.nanoTime();
                    oldest.recorded().get(Math.max(0, left), TimeUnit.NANOSECONDS);
                } else if (oldest.recorded().isDone()) {
                    oldest.recorded().get();
                } else {
                    break;
                }
            } catch (TimeoutException e) {
                break;
            } catch (ExecutionException e) {
                recording.clear();
                throw new IllegalStateException("The CDC relay's bookkeeping failed", e.getCause());
            }
            for (RecordChangeEvent<SourceRecord> event : oldest.records()) {
                committer.markProcessed(event);
            }
            recording.poll();
        }
        committer.markBatchFinished();
    }

    private EventTransport.Delivery publish(List<OutboxMessage> messages) throws InterruptedException {
        Duration backoff = Duration.ZERO;
        while (true) {
            try {
                EventTransport.Delivery delivery = transport.send(messages);
                state = new RelayState(RelayState.Status.RUNNING, "leading slot " + settings.slotName());
                return delivery;
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
     * A batch's bookkeeping in one transaction, on the bookkeeping thread, with custom plans: {@code work} returns the
     * ids of published events whose rows it did not find, and the ids still unsettled from earlier batches are tried
     * again with it. It commits asynchronously ({@link #ASYNC_COMMIT}), or, when it settles earlier batches' rows,
     * synchronously ({@link #SYNC_COMMIT}); the ids it settled are forgotten only once it has committed. (A
     * transaction that fails, even at its commit, or that a crash of PostgreSQL loses, forgets nothing: those rows
     * would stay pending for ever, their events published.)
     */
    private void bookkeeping(Supplier<Set<UUID>> work) {
        boolean settling = !unsettled.isEmpty();
        Set<UUID> notFound = bookkeepingTx.execute(status -> {
            jdbc.execute((settling ? SYNC_COMMIT : ASYNC_COMMIT) + "; " + OutboxLedger.CUSTOM_PLANS);
            Set<UUID> missing = new HashSet<>(work.get());
            if (settling) {
                missing.addAll(ledger.settle(unsettled.keySet()));
            }
            return missing;
        });
        settleLater(notFound);
    }

    /**
     * The bookkeeping of a batch without events: the rows of earlier ones not found yet, if any; without them, no
     * transaction.
     */
    private void settleEarlier() {
        if (!unsettled.isEmpty()) {
            bookkeeping(Set::of);
        }
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

    /**
     * The aggregates of {@code messages} that have a parked event, in the table or about to be by the bookkeeping of a
     * batch still being recorded: their events are parked behind it, unpublished, so that the aggregate keeps its
     * order.
     */
    private Set<String> parkedAggregates(List<OutboxMessage> messages) {
        Object[] aggregates = messages.stream().map(OutboxMessage::aggregate).distinct().toArray();
        Set<String> parked = new HashSet<>(jdbc.query(PARKED_AGGREGATES, ps -> ps.setArray(1,
                ps.getConnection().createArrayOf("text", aggregates)), (rs, n) -> rs.getString(1)));
        recording.forEach(batch -> parked.addAll(batch.parking()));
        return parked;
    }

    private static OutboxMessage toMessage(SourceRecord record) {
        return OutboxChangeEvents.toMessage(record.value());
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
        stopping.countDown();
        electionThread.shutdown();
        try {
            electionThread.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        engineThread.shutdownNow();
        bookkeeper.shutdown(); // a batch's bookkeeping under way commits (its offsets do not move: it is sent again)
        try {
            bookkeeper.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        state = new RelayState(RelayState.Status.STOPPED, "stopped");
    }

    /**
     * A published batch: its change records, the aggregates whose events its bookkeeping parks, that bookkeeping, and
     * when it was submitted ({@link System#nanoTime()}).
     */
    private record Recording(List<RecordChangeEvent<SourceRecord>> records, Set<String> parking, Future<?> recorded,
                             long submittedAt) {

        /** This batch followed by the records of a batch without events. */
        Recording and(List<RecordChangeEvent<SourceRecord>> more) {
            List<RecordChangeEvent<SourceRecord>> all = new ArrayList<>(records);
            all.addAll(more);
            return new Recording(all, parking, recorded, submittedAt);
        }
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }
}
