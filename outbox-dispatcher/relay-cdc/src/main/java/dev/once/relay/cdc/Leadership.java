package dev.once.relay.cdc;

import dev.once.OnceConfigurationException;
import dev.once.OnceException;
import dev.once.relay.EventTransport;
import dev.once.relay.OutboxRelay.RelayState;
import dev.once.relay.RelayListener;
import dev.once.relay.TransportUnavailableException;
import dev.once.relay.cdc.internal.PostgresCoordinates;
import dev.once.spi.Backoff;
import dev.once.spi.RateLimitedLog;
import dev.once.spi.TransientFailures;
import dev.once.spi.Waiter;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who runs the engine. Of all instances, the holder of the slot's advisory lock ({@link LeaderLock}) leads: it runs
 * the preflight, asks Kafka whether it answers, starts an {@link EngineSession}, and checks every {@code leaderPoll}
 * that its lock connection answers and its engine streams. The others stand by and try the lock as often. A leader
 * that cannot lead (a misconfiguration, Kafka or PostgreSQL out of reach, an engine failure) steps down, shows why in
 * {@link #state()} (FAILED, or BACKING_OFF while out of reach), and tries again after a pause that doubles from
 * {@code retryFirst} to {@code retryMax}; the log says so once, then at most once a minute ({@link RateLimitedLog}).
 * With {@code failFast}, a lasting misconfiguration found by the first attempt ends the election instead.
 */
final class Leadership {

    private static final Logger log = LoggerFactory.getLogger(CdcRelay.class);

    private final String name;
    private final CdcSettings settings;
    private final EventTransport transport;
    private final RelayListener listener;
    private final Function<Consumer<RelayState>, EngineSession> sessions;
    private final Waiter waiter = new Waiter();
    private final RateLimitedLog problems;
    private final CountDownLatch decided = new CountDownLatch(1);
    private volatile RelayState state = new RelayState(RelayState.Status.STOPPED, "not started");
    private volatile EngineSession session;
    private volatile OnceConfigurationException startFailure;
    private final Thread thread;

    /** @param sessions starts a leader's engine, which reports its state while it publishes to the given consumer */
    Leadership(String name, CdcSettings settings, EventTransport transport, RelayListener listener,
               Function<Consumer<RelayState>, EngineSession> sessions) {
        this.name = name;
        this.settings = settings;
        this.transport = transport;
        this.listener = listener;
        this.sessions = sessions;
        this.problems = new RateLimitedLog(log, "CDC relay " + name);
        this.thread = new Thread(this::elect, "once-cdc-election-" + name);
        thread.setDaemon(true);
    }

    /**
     * Starts the election, once, and waits up to {@code wait} for its first attempt; returns the lasting
     * misconfiguration that attempt found with {@code failFast}, which ended the election, or {@code null}.
     */
    OnceConfigurationException start(Duration wait) {
        state = new RelayState(RelayState.Status.STARTING, "electing");
        thread.start();
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
        Duration pause = Duration.ZERO;
        try (LeaderLock lock = new LeaderLock(settings)) {
            while (waiter.pause(pause)) {
                pause = settings.leaderPoll();
                try {
                    if (session == null) {
                        CdcPreflight.Finding finding = lead(lock);
                        if (finding != null && decided.getCount() > 0 && settings.failFast() && finding.lasting()) {
                            stepDown(lock);
                            startFailure = finding.error(); // start() throws it: said once, by the application
                            state = new RelayState(RelayState.Status.FAILED, finding.error().getMessage());
                            return;
                        } else if (finding != null) {
                            throw finding.error();
                        } else if (session != null) {
                            retry.reset();
                        }
                    } else if (session.failure() != null) {
                        throw new EngineSession.EngineFailure(settings, null, session.failure());
                    } else if (!lock.stillHeld()) {
                        throw new SQLNonTransientConnectionException("lost its leader lock connection", "08006");
                    }
                } catch (RuntimeException | SQLException e) {
                    stepDown(lock);
                    pause = retry.next();
                    cannotLead(e, pause);
                } finally {
                    decided.countDown(); // the first attempt is over
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
        CdcPreflight.Finding finding = CdcPreflight.check(settings);
        if (finding == null) {
            transport.verify(); // not RUNNING, with nothing to publish yet, while Kafka would refuse it or not answer
            session = sessions.apply(s -> state = s);
            state = CdcRelay.leading(settings);
            problems.resolved();
            log.info("CDC relay {} leads slot {}", name, settings.slotName());
        }
        return finding;
    }

    private void stepDown(LeaderLock lock) {
        EngineSession current = session;
        session = null;
        if (current != null) {
            current.close();
        }
        lock.close();
    }

    /**
     * Shows why the relay does not lead, and logs it at most once a minute while it stays the same: what Once found
     * wrong in its own words (a misconfiguration and its fix, Kafka out of reach, the engine's failure), PostgreSQL out
     * of reach as an outage, and anything else nobody foresaw by its deepest cause.
     */
    private void cannotLead(Throwable failure, Duration retryIn) {
        boolean outage = TransientFailures.isTransient(failure) || failure instanceof TransportUnavailableException;
        String problem = failure instanceof OnceException ? failure.getMessage() : (outage ? "The CDC relay cannot "
                + "reach PostgreSQL at " + PostgresCoordinates.fromJdbcUrl(settings.jdbcUrl()) + " as "
                + settings.user() : "The CDC relay failed before it could lead slot " + settings.slotName()) + ": "
                + TransientFailures.describe(failure); // never the URL, which may carry a password
        if (failure instanceof TransportUnavailableException unavailable) {
            listener.unavailable(unavailable, retryIn);
        } else if (failure instanceof OnceConfigurationException) {
            listener.failed(failure);
        }
        state = new RelayState(outage ? RelayState.Status.BACKING_OFF : RelayState.Status.FAILED,
                problem + " (next attempt in " + RateLimitedLog.seconds(retryIn) + " s)");
        RateLimitedLog.Kind kind = failure instanceof OnceConfigurationException ? RateLimitedLog.Kind.MISCONFIGURATION
                : outage ? RateLimitedLog.Kind.OUTAGE : RateLimitedLog.Kind.FAILURE;
        problems.report("cannot lead: " + problem, failure, kind, retryIn);
    }

    /** Ends the election: the leader stops its engine and gives up its lock. Waits up to 30 s. */
    void close() {
        waiter.stop();
        Waiter.join(thread, Duration.ofSeconds(30));
    }
}
