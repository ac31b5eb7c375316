package dev.once.relay.cdc;

import dev.once.OnceException;
import dev.once.outbox.OutboxOperations;
import dev.once.relay.EventTransport;
import dev.once.relay.OutboxRelay.RelayState;
import dev.once.relay.RelayListener;
import dev.once.relay.RelayOptions;
import dev.once.relay.cdc.internal.EngineProperties;
import dev.once.relay.cdc.internal.JdbcOffsetBackingStore;
import dev.once.spi.TransientFailures;
import dev.once.spi.Waiter;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import java.time.Duration;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One term of leadership: Debezium's engine streaming the relay's slot into a {@link BatchPublisher} on a thread of its
 * own, from the offsets stored in PostgreSQL ({@link JdbcOffsetBackingStore}). Debezium takes a snapshot of the rows
 * not yet published when there are no offsets, or when they point where the slot no longer goes: a slot created anew
 * (after it was lost, dropped, or left behind on an old primary) never resumes from offsets of its predecessor.
 * Started once the preflight passed, closed when the relay steps down.
 */
final class EngineSession implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(CdcRelay.class);

    /**
     * How long a new leader waits for its engine to take the replication slot or to hand over its first batch. A
     * snapshot of a new slot may take much longer; it counts from its first batch.
     */
    static final Duration SLOT_WAIT = Duration.ofSeconds(60);
    static final Duration SLOT_POLL = Duration.ofMillis(50);

    /** The engine stopped, or could not start: {@code why}, or its {@code cause} summarised by its deepest cause. */
    static final class EngineFailure extends OnceException {

        EngineFailure(CdcSettings settings, String why, Throwable cause) {
            super("The CDC engine of slot " + settings.slotName() + " stopped: "
                    + (cause == null ? why : TransientFailures.describe(cause)), cause);
        }
    }

    private final String name;
    private final Waiter stopping = new Waiter();
    private final Thread thread;
    private final DebeziumEngine<RecordChangeEvent<SourceRecord>> engine;
    private final BatchPublisher publisher;
    private volatile Throwable failure;

    private EngineSession(String name, DataSource dataSource, CdcSettings settings, EventTransport transport,
                          RelayOptions options, RelayListener listener, Consumer<RelayState> states) {
        this.name = name;
        JdbcOffsetBackingStore.register(settings.slotName(), dataSource);
        RelayState leading = CdcRelay.leading(settings);
        publisher = new BatchPublisher(name, dataSource, transport, options, listener, stopping, states, leading);
        engine = DebeziumEngine.create(ChangeEventFormat.of(io.debezium.embedded.Connect.class))
                .using(EngineProperties.of(settings, options))
                .notifying(publisher)
                .using((success, message, error) -> {
                    if (!success && !stopping.stopped()) {
                        failure = error != null ? error : new IllegalStateException(message);
                        listener.failed(failure); // logged by the election, once
                    }
                })
                .build();
        thread = new Thread(engine, "once-cdc-engine-" + name);
        thread.setDaemon(true);
    }

    /**
     * Starts the engine and returns once it streams from the slot, or has handed over the first batch of a snapshot.
     *
     * @param slotWait how long the engine may take to do either ({@link #SLOT_WAIT})
     * @throws EngineFailure when the engine fails or does neither within {@code slotWait}; it is closed
     */
    static EngineSession start(String name, DataSource dataSource, CdcSettings settings, EventTransport transport,
                               RelayOptions options, RelayListener listener, Consumer<RelayState> states,
                               Duration slotWait) {
        EngineSession session = new EngineSession(name, dataSource, settings, transport, options, listener, states);
        session.thread.start();
        OutboxOperations outbox = OutboxOperations.create(dataSource);
        long deadline = System.nanoTime() + slotWait.toNanos();
        while (session.failure == null && !session.publisher.delivering()
                && !outbox.slot(settings.slotName()).active()) {
            if (System.nanoTime() > deadline || !session.stopping.pause(SLOT_POLL)) {
                session.close();
                throw new EngineFailure(settings, "replication slot " + settings.slotName() + " did not become "
                        + "active, nor did a snapshot of it begin, within " + slotWait.toSeconds() + " s", null);
            }
        }
        if (session.failure != null) {
            session.close();
            throw new EngineFailure(settings, null, session.failure);
        }
        return session;
    }

    /** Why the engine stopped, or {@code null} while it streams. */
    Throwable failure() {
        return failure;
    }

    /** Stops the engine: a batch waiting for Kafka gives up, and its offsets do not move (it is streamed again). */
    @Override
    public void close() {
        stopping.stop();
        try {
            engine.close();
        } catch (Exception e) {
            if (failure == null) {
                log.warn("Closing the CDC engine of {} failed", name, e);
            } else { // a failed engine has shut itself down already
                log.debug("Closing the failed CDC engine of {}: {}", name, e.toString());
            }
        }
        Waiter.join(thread, Duration.ofSeconds(30));
    }
}
