package dev.once.relay.cdc;

import dev.once.OnceConfigurationException;
import dev.once.spi.SlotWatermarks;
import dev.once.relay.EventTransport;
import dev.once.relay.OutboxRelay;
import dev.once.relay.RelayListener;
import dev.once.relay.RelayOptions;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * The default relay: Debezium embedded reads committed outbox inserts from the write-ahead log ({@code pgoutput}) in
 * commit order and publishes them. The replication slot is the one record of what is published:
 * <ul>
 *   <li><b>One leader</b> runs the engine ({@link Leadership}): the holder of a PostgreSQL advisory lock, after a
 *       preflight that turns what would fail inside Debezium into one message naming the fix ({@link CdcPreflight}).
 *       A lost or invalidated slot is created anew, and every row not yet confirmed is published again.</li>
 *   <li><b>Each batch</b> is published, and what Kafka refused parked, before the engine's offsets may move past it
 *       ({@link BatchPublisher}); the offsets live in PostgreSQL, so a new leader resumes where the last one stopped
 *       ({@link EngineSession}). Nothing else is written per batch.</li>
 *   <li><b>Rows leave the outbox</b> once the slot has confirmed a position past their commit, which it does only after
 *       those offsets are stored ({@link SlotWatermarks}, on every instance). A crash at any step sends the batch
 *       again; the consumers' claims absorb the copy.</li>
 * </ul>
 * Thread-safe.
 */
public final class CdcRelay implements OutboxRelay {

    /** How long {@link #start()} waits for the first attempt to lead (or to stand by) to finish. */
    static final Duration START_WAIT = Duration.ofSeconds(60);

    private final Leadership leadership;
    private final SlotWatermarks watermarks;
    private boolean started;

    /** A relay whose rows leave the outbox by watermarks of its own, as by default, after its retention. */
    public CdcRelay(String name, DataSource dataSource, CdcSettings settings, EventTransport transport,
                    RelayOptions options, RelayListener listener) {
        this(name, dataSource, settings, transport, options, listener, new SlotWatermarks(dataSource,
                settings.slotName(), SlotWatermarks.Options.ofDefaults().withRetention(options.retention())));
    }

    /** A relay whose rows leave the outbox by {@code watermarks}, which must be of its slot. */
    public CdcRelay(String name, DataSource dataSource, CdcSettings settings, EventTransport transport,
                    RelayOptions options, RelayListener listener, SlotWatermarks watermarks) {
        this(name, dataSource, settings, transport, options, listener, watermarks, EngineSession.SLOT_WAIT);
    }

    /** {@code slotWait}: how long a new leader's engine may take to stream or to begin a snapshot. */
    CdcRelay(String name, DataSource dataSource, CdcSettings settings, EventTransport transport, RelayOptions options,
             RelayListener listener, SlotWatermarks watermarks, Duration slotWait) {
        if (!watermarks.slotName().equals(settings.slotName())) {
            throw new IllegalArgumentException("the watermarks of slot " + watermarks.slotName() + " cannot tell what "
                    + "slot " + settings.slotName() + " published");
        }
        this.leadership = new Leadership(name, settings, transport, listener, states -> EngineSession.start(name,
                dataSource, settings, transport, options, listener, states, slotWait));
        this.watermarks = watermarks;
    }

    /**
     * Starts the election and the watermarks, and returns once the first attempt is over: this instance leads with an
     * active replication slot, stands by, or could not lead and retries (its {@link #state()} says why).
     *
     * @throws OnceConfigurationException with {@code failFast}, when the first attempt found a misconfiguration that
     *         only an operator can fix (wal_level, the REPLICATION privilege, the publication, a slot of another
     *         database); the relay is closed then
     */
    @Override
    public synchronized void start() {
        if (started) {
            return;
        }
        started = true;
        OnceConfigurationException failure = leadership.start(START_WAIT);
        if (failure != null) {
            close();
            throw failure;
        }
        watermarks.start();
    }

    /** Whether this instance currently runs the engine. */
    boolean isLeader() {
        return leadership.leads();
    }

    @Override
    public RelayState state() {
        return leadership.state();
    }

    /** The relay's state while it leads and publishes. */
    static RelayState leading(CdcSettings settings) {
        return new RelayState(RelayState.Status.RUNNING, "leading slot " + settings.slotName());
    }

    @Override
    public void close() {
        leadership.close();
        watermarks.close();
    }
}
