package dev.once.dispatch;

import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.ClaimResult;
import dev.once.idempotency.IdempotencyStore;
import dev.once.idempotency.StoredResponse;
import dev.once.wire.RecordSigning;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.kafka.listener.BatchListenerFailedException;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Runs each handler registered for a record's event type and version at most once per event, by claiming
 * tenant + actor + {@code <event_type>:v<version>:<handler_key>} + event_id in the idempotency store first. A
 * redelivery finds each handler's claim succeeded and skips it, so a record retried because one handler failed never
 * re-runs the handlers that already succeeded. The request hash is the payload's fingerprint: the same event id with
 * another payload is a conflict and is dead-lettered.
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
    public static final Duration CLAIM_RETENTION = Duration.ofDays(7);

    /** The name of a handler's observation at one event, and of its span. */
    public static final String OBSERVATION = "once.dispatcher.handle";

    private final Map<String, List<HandlerRegistration>> handlers = new LinkedHashMap<>();
    private final TransactionalHandling transactional;
    private final LeasedHandling leased;
    private final IdempotencyStore store;
    private final TransactionTemplate outside;
    private final ClaimPolicy policy;
    private final RecordSigning signing;
    private final DispatchListener listener;

    public EventDispatcher(IdempotencyStore store, PlatformTransactionManager transactions, List<HandlerRegistration> registrations,
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
    public EventDispatcher(IdempotencyStore store, PlatformTransactionManager transactions, List<HandlerRegistration> registrations,
                           ClaimPolicy policy, RecordSigning signing, DispatchListener listener) {
        this(store, transactions, registrations, policy, signing, listener, ObservationRegistry.NOOP);
    }

    /**
     * @param observations each handler's turn at an event is the observation {@value #OBSERVATION}, tagged
     *        {@code handler} and {@code outcome} (handled, skipped, failed, rolled_back): with a tracer a span whose
     *        parent is the producing request's span, restored from the record's trace headers;
     *        {@link ObservationRegistry#NOOP}, nothing
     */
    public EventDispatcher(IdempotencyStore store, PlatformTransactionManager transactions, List<HandlerRegistration> registrations,
                           ClaimPolicy policy, RecordSigning signing, DispatchListener listener,
                           ObservationRegistry observations) {
        this.store = store;
        this.policy = policy;
        this.signing = signing;
        this.listener = listener;
        HandlingObservations handling = new HandlingObservations(observations);
        this.transactional = new TransactionalHandling(store, transactions, policy, listener, handling);
        this.leased = new LeasedHandling(store, transactions, policy, listener, handling);
        this.outside = new TransactionTemplate(transactions);
        this.outside.setPropagationBehavior(TransactionDefinition.PROPAGATION_NOT_SUPPORTED);
        for (HandlerRegistration r : registrations) {
            handlers.computeIfAbsent(HandlerRegistration.key(r.eventType(), r.eventVersion()), k -> new ArrayList<>()).add(r);
        }
    }

    /**
     * Handles one record with every matching handler: a poll of one.
     *
     * @throws PoisonEventException when the record can never be handled
     * @throws HandlerFailedException when a handler failed; handlers that succeeded are not run again on retry
     */
    public void dispatch(ConsumerRecord<String, byte[]> record) {
        TransactionalHandling.Failure failure = handle(List.of(record));
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
        TransactionalHandling.Failure failure = handle(records);
        if (failure != null) {
            throw new BatchListenerFailedException(failure.cause().getMessage(), failure.cause(),
                    failure.delivery().index());
        }
    }

    private TransactionalHandling.Failure handle(List<ConsumerRecord<String, byte[]>> records) {
        List<Delivery> deliveries = new ArrayList<>(records.size());
        for (int i = 0; i < records.size(); i++) {
            deliveries.add(Delivery.of(i, records.get(i), handlers, signing));
        }
        int i = 0;
        while (i < deliveries.size()) {
            Delivery delivery = deliveries.get(i);
            if (delivery.poison() != null) {
                return new TransactionalHandling.Failure(delivery, delivery.poison());
            }
            if (!delivery.claims(HandlerMode.LEASED).isEmpty()) {
                TransactionalHandling.Failure failure = alone(delivery);
                if (failure != null) {
                    return failure;
                }
                i++;
                continue;
            }
            int end = i;
            while (end < deliveries.size() && deliveries.get(end).poison() == null
                    && deliveries.get(end).claims(HandlerMode.LEASED).isEmpty()) {
                end++;
            }
            TransactionalHandling.Failure failure = transactional.handle(deliveries.subList(i, end));
            if (failure != null) {
                return failure;
            }
            i = end;
        }
        return null;
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

    DispatchListener listener() {
        return listener;
    }

    /** Marks the failed handlers' claims {@code failed} after the last retry, so redeliveries do not re-run them. */
    void markFailed(ConsumerRecord<String, byte[]> record, HandlerFailedException failure) {
        Delivery delivery = Delivery.of(0, record, handlers, signing);
        StoredResponse reason = StoredResponse.of(500, "text/plain", String.valueOf(failure.getCause()));
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
