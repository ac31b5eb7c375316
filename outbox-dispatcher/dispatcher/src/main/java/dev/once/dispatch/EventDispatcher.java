package dev.once.dispatch;

import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.ClaimResult;
import dev.once.idempotency.HandlerClaimStore;
import dev.once.wire.RecordSigning;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.kafka.listener.BatchListenerFailedException;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Runs each handler registered for a record's event type and version at most once per event, by claiming
 * {@code <event_type>:v<version>:<handler_key>} + event_id in the {@link HandlerClaimStore} first, with tenant, actor
 * and the payload's fingerprint as the claim's fingerprint. A redelivery finds each handler's claim succeeded and
 * skips it, so a record retried because one handler failed never re-runs the handlers that already succeeded. The same
 * event id with another payload, tenant or actor is a conflict and is dead-lettered.
 *
 * <p>One path for every record: a poll is worked out once into {@link Delivery deliveries} (envelope and claims), and
 * a single record is a poll of one. Runs of records whose handlers are all TRANSACTIONAL are handled together
 * ({@link TransactionalHandling}); a record with a LEASED handler on its own, its TRANSACTIONAL handlers first
 * ({@link LeasedHandling}). Listeners and metrics hear each outcome once, after it committed. Thread-safe.
 */
public final class EventDispatcher {

    /**
     * How long a handler's claim is kept by default, and so how late a redelivery is still recognised and skipped:
     * Kafka's own default retention ({@code log.retention.hours=168}), since a record can be delivered again for as
     * long as its topic keeps it (a consumer group reset, a topic replayed, a dead letter re-published).
     */
    public static final Duration CLAIM_RETENTION = dev.once.idempotency.ClaimPartitions.RETENTION;

    /** The name of a handler's observation at one event, and of its span. */
    public static final String OBSERVATION = "once.dispatcher.handle";

    private final Delivery.Handlers handlers;
    private final TransactionalHandling transactional;
    private final LeasedHandling leased;
    private final HandlerClaimStore store;
    private final TransactionTemplate outside;
    private final ClaimPolicy policy;
    private final RecordSigning signing;
    private final DispatchListener listener;

    public EventDispatcher(HandlerClaimStore store, PlatformTransactionManager transactions, List<HandlerRegistration> registrations,
                           ClaimPolicy policy, RecordSigning signing) {
        this(store, transactions, registrations, policy, signing, DispatchListener.NONE);
    }

    /**
     * @param policy the claims' lease (LEASED handlers) and TTL: how long a handler's claim is kept, and so how late a
     *        redelivery is still recognised and skipped
     * @param signing checks each record's signature before anything of it is trusted: a record it refuses is
     *        dead-lettered ({@link SignatureRejectedException}) and takes no claim; {@link RecordSigning#off()} trusts
     *        every header as it comes
     */
    public EventDispatcher(HandlerClaimStore store, PlatformTransactionManager transactions, List<HandlerRegistration> registrations,
                           ClaimPolicy policy, RecordSigning signing, DispatchListener listener) {
        this(store, transactions, registrations, policy, signing, listener, ObservationRegistry.NOOP);
    }

    /**
     * @param observations each handler's turn at an event is the observation {@value #OBSERVATION}, tagged
     *        {@code handler} and {@code outcome} (handled, skipped, failed, rolled_back): with a tracer a span whose
     *        parent is the producing request's span, restored from the record's trace headers;
     *        {@link ObservationRegistry#NOOP}, nothing
     */
    public EventDispatcher(HandlerClaimStore store, PlatformTransactionManager transactions, List<HandlerRegistration> registrations,
                           ClaimPolicy policy, RecordSigning signing, DispatchListener listener,
                           ObservationRegistry observations) {
        this(store, transactions, registrations, policy, signing, listener, observations, UnhandledPolicy.ofDefaults());
    }

    /**
     * @param unhandled what becomes of an event no handler takes: a foreign type, or an unknown version of a handled
     *        type ({@link UnhandledPolicy}); holding needs {@link Parking}, and without it an event to hold is
     *        dead-lettered
     */
    public EventDispatcher(HandlerClaimStore store, PlatformTransactionManager transactions, List<HandlerRegistration> registrations,
                           ClaimPolicy policy, RecordSigning signing, DispatchListener listener,
                           ObservationRegistry observations, UnhandledPolicy unhandled) {
        this.store = store;
        this.policy = policy;
        this.signing = signing;
        this.listener = listener;
        HandlingObservations handling = new HandlingObservations(observations);
        this.transactional = new TransactionalHandling(store, transactions, policy, listener, handling);
        this.leased = new LeasedHandling(store, transactions, policy, listener, handling);
        this.outside = new TransactionTemplate(transactions);
        this.outside.setPropagationBehavior(TransactionDefinition.PROPAGATION_NOT_SUPPORTED);
        this.handlers = Delivery.Handlers.of(registrations, unhandled);
    }

    /**
     * Handles one record with every matching handler: a poll of one.
     *
     * @throws PoisonEventException when the record can never be handled
     * @throws HandlerFailedException when a handler failed; handlers that succeeded are not run again on retry
     */
    public void dispatch(ConsumerRecord<String, byte[]> record) {
        TransactionalHandling.Failure failure = handle(List.of(record), null);
        if (failure != null) {
            throw failure.cause();
        }
    }

    /**
     * Handles a whole poll, in order. Everything before the first record that fails is committed.
     *
     * @throws BatchListenerFailedException naming the index of the record that failed, with its failure as the cause
     */
    public void dispatchBatch(List<ConsumerRecord<String, byte[]>> records) {
        dispatchBatch(records, null);
    }

    /**
     * As {@link #dispatchBatch(List)}; with {@code parking}, a record whose handler fails, or which is held, parks its
     * key instead of failing the poll, and every later record of a parked key parks behind it.
     */
    void dispatchBatch(List<ConsumerRecord<String, byte[]>> records, ParkingLot parking) {
        TransactionalHandling.Failure failure = handle(records, parking);
        if (failure != null) {
            throw new BatchListenerFailedException(failure.cause().getMessage(), failure.cause(),
                    failure.delivery().index());
        }
    }

    /**
     * Handles a poll in order and returns the first failure it cannot get past: poison, the database's, or, without
     * parking, a handler's. Foreign types are skipped; with parking, held events and handlers' failures park their
     * keys and the poll goes on, and records of parked keys park behind them.
     */
    private TransactionalHandling.Failure handle(List<ConsumerRecord<String, byte[]>> records, ParkingLot parking) {
        List<Delivery> deliveries = new ArrayList<>(records.size());
        for (int i = 0; i < records.size(); i++) {
            deliveries.add(Delivery.of(i, records.get(i), handlers, signing));
        }
        Set<String> parked;
        try {
            parked = parking == null ? Set.of() : parking.parkedKeys(deliveries);
        } catch (RuntimeException e) {
            return new TransactionalHandling.Failure(deliveries.get(0), e); // the database's: retried in place
        }
        int i = 0;
        while (i < deliveries.size()) {
            Delivery delivery = deliveries.get(i);
            if (delivery.poison() != null) {
                return new TransactionalHandling.Failure(delivery, delivery.poison());
            }
            if (delivery.skipped()) {
                listener.unhandled(delivery.message().eventType(), delivery.unhandled().reason(), "skipped");
                i++;
                continue;
            }
            String key = ParkingLot.key(delivery);
            boolean behind = key != null && parked.contains(key);
            if (behind || delivery.held()) {
                if (parking == null) {
                    return new TransactionalHandling.Failure(delivery, new PoisonEventException("No handler for "
                            + delivery.message().eventType() + " v" + delivery.message().eventVersion()
                            + ", and holding it needs parking (once.dispatcher.parking.enabled)"));
                }
                RuntimeException failed = park(parking, parked, delivery, null);
                if (failed != null) {
                    return new TransactionalHandling.Failure(delivery, failed);
                }
                if (!behind) {
                    listener.unhandled(delivery.message().eventType(), delivery.unhandled().reason(), "held");
                }
                i++;
                continue;
            }
            int end = i + 1;
            TransactionalHandling.Failure failure;
            if (!delivery.claims(HandlerMode.LEASED).isEmpty()) {
                failure = alone(delivery);
            } else {
                while (end < deliveries.size() && runsTogether(deliveries.get(end), parked)) {
                    end++;
                }
                failure = transactional.handle(deliveries.subList(i, end));
            }
            if (failure == null) {
                i = end;
                continue;
            }
            if (parking == null || !(failure.cause() instanceof HandlerFailedException handler)) {
                return failure;
            }
            RuntimeException failed = park(parking, parked, failure.delivery(), HandlerFailure.of(handler));
            if (failed != null) {
                return new TransactionalHandling.Failure(failure.delivery(), failed);
            }
            i = failure.delivery().index() + 1;
        }
        return null;
    }

    /**
     * Parks {@code delivery} (behind its key when the key is parked, else as its head: failing with {@code failure},
     * or held) and notes its key parked for the rest of the poll; returns what kept it from being parked, the
     * database's failure, which the poll retries in place from this record.
     */
    private RuntimeException park(ParkingLot parking, Set<String> parked, Delivery delivery, HandlerFailure failure) {
        String key = ParkingLot.key(delivery);
        boolean behind = key != null && parked.contains(key);
        try {
            parking.park(delivery, failure);
        } catch (RuntimeException e) {
            return e;
        }
        listener.parked(behind ? ParkingLot.BEHIND_REASON
                : failure == null ? ParkingLot.HELD_REASON : ParkingLot.FAILING_REASON);
        if (key != null) {
            parked.add(key);
        }
        return null;
    }

    /** Whether {@code next} joins a run of records handled in one transaction. */
    private static boolean runsTogether(Delivery next, Set<String> parked) {
        String key = ParkingLot.key(next);
        return next.poison() == null && next.unhandled() == null && (key == null || !parked.contains(key))
                && next.claims(HandlerMode.LEASED).isEmpty();
    }

    /** What a retry of a parked event came to. */
    record Retried(Outcome outcome, RuntimeException cause) {
        enum Outcome { DONE, HELD, POISON, FAILED, NOT_NOW }
    }

    /**
     * Runs a parked event again, alone: {@code DONE} when every handler has now succeeded (or the event needs none),
     * {@code FAILED} with the handlers' failure, {@code HELD} when no handler here takes it, {@code POISON} when it
     * can never be handled, {@code NOT_NOW} with the database's failure. Only the handlers in {@code failed} run, when
     * any of them is still registered: the others succeeded, and their claims may be gone by now (an event failed for
     * longer than the claim retention); otherwise every handler runs, and the claims skip those that succeeded.
     */
    Retried retry(ConsumerRecord<String, byte[]> record, Set<String> failed) {
        Delivery delivery = Delivery.of(0, record, handlers, signing).onlyFor(failed);
        if (delivery.poison() != null) {
            return new Retried(Retried.Outcome.POISON, delivery.poison());
        }
        if (delivery.skipped()) {
            return new Retried(Retried.Outcome.DONE, null);
        }
        if (delivery.held()) {
            return new Retried(Retried.Outcome.HELD, null);
        }
        TransactionalHandling.Failure failure = delivery.claims(HandlerMode.LEASED).isEmpty()
                ? transactional.handle(List.of(delivery)) : alone(delivery);
        if (failure == null) {
            return new Retried(Retried.Outcome.DONE, null);
        }
        if (failure.cause() instanceof HandlerFailedException) {
            return new Retried(Retried.Outcome.FAILED, failure.cause());
        }
        return new Retried(failure.cause() instanceof PoisonEventException ? Retried.Outcome.POISON
                : Retried.Outcome.NOT_NOW, failure.cause());
    }

    /** Each handler's {@code <event_type>:v<version>}: the parked events this dispatcher can run. */
    Set<String> handledKeys() {
        return handlers.byKey().keySet();
    }

    /** A record with a LEASED handler: its TRANSACTIONAL handlers first, then the LEASED ones, one failure for all. */
    private TransactionalHandling.Failure alone(Delivery delivery) {
        TransactionalHandling.Failure first = transactional.handle(List.of(delivery));
        if (first != null && !(first.cause() instanceof HandlerFailedException)) {
            return first; // poison, or the database's: the LEASED handlers would meet it too
        }
        RuntimeException second = leased.handle(delivery);
        if (first == null && second == null) {
            return null;
        }
        List<HandlerFailedException> failed = new ArrayList<>();
        if (first != null) {
            failed.add((HandlerFailedException) first.cause());
        }
        if (second instanceof HandlerFailedException handler) {
            failed.add(handler);
        } else if (second != null) {
            return new TransactionalHandling.Failure(delivery, second);
        }
        return new TransactionalHandling.Failure(delivery, HandlerFailedException.of(failed));
    }

    ClaimPolicy claimPolicy() {
        return policy;
    }

    DispatchListener listener() {
        return listener;
    }

    /** Marks the failed handlers' claims {@code failed} after the last retry, so redeliveries do not re-run them. */
    void markFailed(ConsumerRecord<String, byte[]> record, HandlerFailedException failure) {
        Delivery delivery = Delivery.of(0, record, handlers, signing);
        String reason = String.valueOf(failure.getCause());
        for (Delivery.Claim claim : delivery.claims()) {
            if (failure.handlerKeys().contains(claim.handlerKey())) {
                outside.executeWithoutResult(s -> {
                    ClaimResult result = store.claim(claim.scope(), claim.requestHash(), policy);
                    if (result instanceof ClaimResult.Claimed c) {
                        store.markFailed(c.token(), reason).orThrow(c.token());
                    }
                });
            }
        }
    }
}
