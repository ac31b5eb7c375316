package dev.once.relay.cdc;

import dev.once.relay.EventTransport;
import dev.once.relay.OutboxChangeEvents;
import dev.once.wire.OutboxMessage;
import dev.once.relay.OutboxRelay.RelayState;
import dev.once.relay.RelayListener;
import dev.once.relay.RelayOptions;
import dev.once.relay.TransportUnavailableException;
import dev.once.spi.Backoff;
import dev.once.spi.OutboxLedger;
import dev.once.spi.RateLimitedLog;
import dev.once.spi.Waiter;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * One engine batch at a time, on the engine's thread: its outbox events are published, what Kafka refused is parked
 * with the events of its aggregate behind it, and only then may the engine's offsets move past the batch. That is all
 * a batch writes: the rows of published events leave the outbox once the replication slot has confirmed them
 * ({@link dev.once.spi.SlotWatermarks}), which it does only after these offsets are stored. While Kafka is
 * unavailable the batch is retried, backing off, and the offsets stay put; a crash sends the batch again.
 */
final class BatchPublisher implements DebeziumEngine.ChangeConsumer<RecordChangeEvent<SourceRecord>> {

    private static final Logger log = LoggerFactory.getLogger(CdcRelay.class);

    /** How often parking looks again for a row not visible yet. */
    static final Duration PARK_RETRY = Duration.ofMillis(20);

    private final String name;
    private final EventTransport transport;
    private final RelayOptions options;
    private final RelayListener listener;
    private final TransactionTemplate tx;
    private final OutboxLedger ledger;
    private final Waiter stopping;
    private final Consumer<RelayState> states;
    private final RelayState leading;
    private final RateLimitedLog problems;
    private final RateLimitedLog invisible;
    private volatile boolean delivering;

    /**
     * @param stopping stopped when the relay steps down: a batch waiting for Kafka gives up, unrecorded
     * @param states where the relay's state goes: backing off while Kafka is unavailable, {@code leading} once it
     *               publishes again
     */
    BatchPublisher(String name, DataSource dataSource, EventTransport transport, RelayOptions options,
                   RelayListener listener, Waiter stopping, Consumer<RelayState> states, RelayState leading) {
        this.name = name;
        this.transport = transport;
        this.options = options;
        this.listener = listener;
        this.tx = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        this.ledger = new OutboxLedger(new JdbcTemplate(dataSource), options.retention());
        this.stopping = stopping;
        this.states = states;
        this.leading = leading;
        this.problems = new RateLimitedLog(log, "CDC relay " + name);
        this.invisible = new RateLimitedLog(log, "CDC relay " + name);
    }

    @Override
    public void handleBatch(List<RecordChangeEvent<SourceRecord>> records,
                            DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer)
            throws InterruptedException {
        if (!delivering) {
            delivering = true; // once: a volatile write per batch would be for nothing
        }
        List<OutboxMessage> messages = records.stream()
                .map(event -> OutboxChangeEvents.toMessage(event.record().value())).filter(Objects::nonNull).toList();
        if (!messages.isEmpty()) {
            publish(messages, records);
        }
        for (RecordChangeEvent<SourceRecord> event : records) {
            committer.markProcessed(event);
        }
        committer.markBatchFinished();
    }

    /**
     * Whether the engine has handed over a batch: it streams, or takes a snapshot, during which a new slot is not
     * active (PostgreSQL releases a slot it creates until streaming starts).
     */
    boolean delivering() {
        return delivering;
    }

    /**
     * Publishes {@code messages} but those of parked aggregates, and parks what Kafka did not take; {@code records}:
     * the batch's change events, which say what transaction inserted each row.
     */
    private void publish(List<OutboxMessage> messages, List<RecordChangeEvent<SourceRecord>> records)
            throws InterruptedException {
        Set<String> parked = ledger.parkedAggregates(messages.stream().map(OutboxMessage::aggregate).toList());
        EventTransport.Delivery delivery = send(messages.stream().filter(m -> !parked.contains(m.aggregate())).toList());
        Instant acknowledgedAt = Instant.now();
        Set<UUID> acknowledged = new HashSet<>(delivery.acknowledged());
        Map<UUID, String> parking = new LinkedHashMap<>(delivery.refused());
        messages.stream().filter(m -> !acknowledged.contains(m.id())) // behind a parked or refused event: not sent
                .forEach(m -> parking.putIfAbsent(m.id(), OutboxLedger.behind(m.aggregate())));
        if (!parking.isEmpty()) {
            park(parking, transactions(records, parking.keySet()));
        }
        delivery.report(messages, acknowledgedAt, listener);
    }

    /** Sends until Kafka answers, backing off while it is unavailable; gives up when the relay steps down. */
    private EventTransport.Delivery send(List<OutboxMessage> messages) throws InterruptedException {
        Backoff backoff = new Backoff(options.backoffMin(), options.backoffMax());
        while (!messages.isEmpty()) {
            try {
                EventTransport.Delivery delivery = transport.send(messages);
                if (problems.reporting()) {
                    problems.resolved();
                    states.accept(leading);
                }
                return delivery;
            } catch (TransportUnavailableException e) {
                Duration pause = backoff.next();
                states.accept(new RelayState(RelayState.Status.BACKING_OFF, e.getMessage()));
                problems.report("backs off: " + e.getMessage(), null, RateLimitedLog.Kind.OUTAGE, pause);
                listener.unavailable(e, pause);
                if (!stopping.pause(pause)) {
                    throw new InterruptedException("CDC relay " + name + " stepped down while Kafka was unavailable");
                }
            }
        }
        return new EventTransport.Delivery(List.of(), Map.of());
    }

    /** The transaction that inserted the row of each of {@code ids}, as the batch's change events say ({@code txId}). */
    private static Map<UUID, Long> transactions(List<RecordChangeEvent<SourceRecord>> records, Set<UUID> ids) {
        Map<UUID, Long> transactions = new HashMap<>();
        for (RecordChangeEvent<SourceRecord> event : records) {
            OutboxMessage message = OutboxChangeEvents.toMessage(event.record().value());
            if (message != null && ids.contains(message.id())) {
                transactions.put(message.id(), ((Struct) event.record().value()).getStruct("source").getInt64("txId"));
            }
        }
        return transactions;
    }

    /**
     * Parks {@code rows}, in one transaction per look, committed before the offsets may move past them. A row not found
     * is looked for again for as long as its transaction is in progress: its commit was streamed before it became
     * visible, a moment before on a lone server, as long as a synchronous standby keeps the commit waiting. A row still
     * not found by a look after its transaction had ended was deleted, and nothing waits for it.
     */
    private void park(Map<UUID, String> rows, Map<UUID, Long> transactions) throws InterruptedException {
        Map<UUID, String> left = new HashMap<>(rows);
        left.keySet().retainAll(tx.execute(status -> ledger.park(left)));
        while (!left.isEmpty()) {
            Set<Long> running = ledger.inProgress(left.keySet().stream().map(transactions::get)
                    .filter(Objects::nonNull).toList()); // asked before the next look, which sees what has ended
            left.keySet().retainAll(tx.execute(status -> ledger.park(left)));
            Set<UUID> deleted = left.keySet().stream().filter(id -> !running.contains(transactions.get(id)))
                    .collect(Collectors.toSet());
            if (!deleted.isEmpty()) {
                log.warn("CDC relay {} did not find the rows of events {} to park them: they were deleted", name,
                        deleted);
                left.keySet().removeAll(deleted);
            }
            if (!left.isEmpty()) {
                invisible.report("waits for transactions " + running + " to become visible, to park events of "
                        + "theirs (a commit waiting for a synchronous standby?)", null, RateLimitedLog.Kind.OUTAGE,
                        PARK_RETRY);
                if (!stopping.pause(PARK_RETRY)) {
                    throw new InterruptedException("CDC relay " + name + " stepped down while parking");
                }
            }
        }
        invisible.resolved();
    }
}
