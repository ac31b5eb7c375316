package dev.once.relay.cdc;

import dev.once.OnceConfigurationException;
import dev.once.relay.EventTransport;
import dev.once.relay.OutboxRelay.RelayState;
import dev.once.relay.RelayListener;
import dev.once.relay.RelayOptions;
import dev.once.relay.cdc.internal.PostgresCoordinates;
import dev.once.spi.Backoff;
import dev.once.spi.RateLimitedLog;
import dev.once.spi.TransientFailures;
import dev.once.spi.Waiter;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

/**
 * Who runs the engine. Of all instances, the holder of the slot's advisory lock ({@link LeaderLock}) leads: it runs
 * the preflight, then an {@link EngineSession}, and checks every {@code leaderPoll} that its lock connection answers and
 * its engine streams. The others stand by and try the lock as often. A leader that cannot lead (a misconfiguration,
 * an engine failure, a lost connection) steps down, shows why in {@link #state()} (FAILED, or BACKING_OFF while
 * PostgreSQL is out of reach), and tries again after a pause that doubles from {@code retryFirst} to {@code retryMax};
 * the log says so once, then at most once a minute ({@link RateLimitedLog}). With {@code failFast}, a lasting
 * misconfiguration found by the first attempt ends the election instead ({@link #start}).
 */
final class Leadership {

    private static final Logger log = LoggerFactory.getLogger(CdcRelay.class);

    private final String name;
    private final DataSource dataSource;
    private final CdcSettings settings;
    private final EventTransport transport;
    private final RelayOptions options;
    private final RelayListener listener;
    private final Duration slotWait;
    private final Waiter waiter = new Waiter();
    private final RateLimitedLog problems;
    private final CountDownLatch decided = new CountDownLatch(1);
    private volatile RelayState state = new RelayState(RelayState.Status.STOPPED, "not started");
    private volatile EngineSession session;
    private volatile OnceConfigurationException startFailure;
    private Thread thread;

    /** @param slotWait how long a new leader's engine may take to stream or to begin a snapshot */
    Leadership(String name, DataSource dataSource, CdcSettings settings, EventTransport transport,
               RelayOptions options, RelayListener listener, Duration slotWait) {
        this.name = name;
        this.dataSource = dataSource;
        this.settings = settings;
        this.transport = transport;
        this.options = options;
        this.listener = listener;
        this.slotWait = slotWait;
        this.problems = new RateLimitedLog(log, "CDC relay " + name);
    }

    /**
     * Starts the election and waits up to {@code wait} for its first attempt; returns the lasting misconfiguration that
     * attempt found with {@code failFast}, which ended the election, or {@code null}.
     */
    synchronized OnceConfigurationException start(Duration wait) {
        if (thread == null) {
            state = new RelayState(RelayState.Status.STARTING, "electing");
            thread = new Thread(this::elect, "once-cdc-election-" + name);
            thread.setDaemon(true);
            thread.start();
        }
        try {
            decided.await(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return startFailure;
    }

    RelayState state() {
        return state;
    }

    boolean leads() {
        return session != null;
    }

    private void elect() {
        Backoff retry = new Backoff(settings.retryFirst(), settings.retryMax());
        boolean first = true;
        Duration pause = Duration.ZERO;
        try (LeaderLock lock = new LeaderLock(settings)) {
            while (waiter.pause(pause)) {
                pause = settings.leaderPoll();
                try {
                    if (session == null) {
                        CdcPreflight.Finding finding = lead(lock);
                        if (session != null) {
                            retry.reset();
                        } else if (finding != null) {
                            stepDown(lock);
                            if (first && settings.failFast() && finding.lasting()) {
                                startFailure = finding.error(); // start() throws it: said once, by the application
                                state = new RelayState(RelayState.Status.FAILED, finding.error().getMessage());
                                return;
                            }
                            pause = retry.next();
                            listener.failed(finding.error());
                            cannotLead(finding.error().getMessage(), finding.error(),
                                    RateLimitedLog.Kind.MISCONFIGURATION, pause);
                        }
                    } else if (session.failure() != null || !lock.stillHeld()) {
                        Throwable failure = session.failure();
                        stepDown(lock);
                        pause = retry.next();
                        if (failure != null) {
                            failedToLead(failure, true, pause);
                        } else {
                            cannotLead("lost its leader lock connection to PostgreSQL", null, RateLimitedLog.Kind.OUTAGE,
                                    pause);
                        }
                    }
                } catch (RuntimeException | SQLException e) {
                    stepDown(lock);
                    pause = retry.next();
                    failedToLead(e, e instanceof EngineSession.EngineFailure, pause);
                } finally {
                    first = false;
                    decided.countDown();
                }
            }
            stepDown(lock);
        } finally {
            if (startFailure == null) {
                state = new RelayState(RelayState.Status.STOPPED, "stopped");
            }
        }
    }

    /**
     * Takes the lock (its connection must reach PostgreSQL itself, not a pooler) and, when it got it, runs the
     * preflight and starts the engine; returns the misconfiguration found, or null: leading, or standing by.
     */
    private CdcPreflight.Finding lead(LeaderLock lock) throws SQLException {
        CdcPreflight.Finding pooled = lock.connected() ? null : CdcPreflight.throughPooler(settings);
        if (pooled != null || !lock.tryAcquire()) {
            state = new RelayState(RelayState.Status.STANDBY, "another instance leads " + settings.slotName());
            return pooled;
        }
        CdcPreflight.Finding finding = preflight();
        if (finding == null) {
            session = EngineSession.start(name, dataSource, settings, transport, options, listener, s -> state = s,
                    slotWait);
            state = CdcRelay.leading(settings);
            problems.resolved();
            log.info("CDC relay {} leads slot {}", name, settings.slotName());
        }
        return finding;
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
        EngineSession current = session;
        session = null;
        if (current != null) {
            current.close();
        }
        lock.close();
    }

    /** Shows why the relay does not lead and logs it, at most once a minute while it stays the same. */
    private void cannotLead(String problem, Throwable cause, RateLimitedLog.Kind kind, Duration retryIn) {
        RelayState.Status status = kind == RateLimitedLog.Kind.OUTAGE ? RelayState.Status.BACKING_OFF
                : RelayState.Status.FAILED;
        state = new RelayState(status, problem + " (next attempt in " + RateLimitedLog.seconds(retryIn) + " s)");
        problems.report("cannot lead: " + problem, cause, kind, retryIn);
    }

    /**
     * An engine failure, or a failure to elect or check before it: PostgreSQL out of reach passes by itself (an outage,
     * BACKING_OFF); anything else nobody foresaw is summarised by its deepest cause (FAILURE).
     */
    private void failedToLead(Throwable failure, boolean engine, Duration retry) {
        boolean outage = TransientFailures.isTransient(failure);
        PostgresCoordinates db = PostgresCoordinates.fromJdbcUrl(settings.jdbcUrl()); // the URL may carry a password
        String problem = (engine ? "The CDC engine of slot " + settings.slotName() + " stopped: "
                : outage ? "The CDC relay cannot reach PostgreSQL at " + db + " as " + settings.user() + ": "
                : "The CDC relay failed before it could lead slot " + settings.slotName() + ": ")
                + TransientFailures.describe(failure);
        cannotLead(problem, failure, outage ? RateLimitedLog.Kind.OUTAGE : RateLimitedLog.Kind.FAILURE, retry);
    }

    /** Ends the election: the leader stops its engine and gives up its lock. Waits up to 30 s. */
    void close() {
        waiter.stop();
        Thread current;
        synchronized (this) {
            current = thread;
        }
        Waiter.join(current, Duration.ofSeconds(30));
    }
}
