package dev.once.dispatch;

import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.ClaimResult;
import dev.once.idempotency.IdempotencyScope;
import dev.once.idempotency.IdempotencyStore;
import dev.once.idempotency.RequestFingerprint;
import dev.once.idempotency.StoredResponse;
import dev.once.outbox.OutboxEvent;
import dev.once.wire.WireFormat;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * Runs each handler registered for a record's event type and version at most once per event, by claiming
 * tenant + actor + {@code <event_type>:v<version>:<handler_key>} + event_id in the idempotency store first. A
 * redelivery finds each handler's claim succeeded and skips it, so a record retried because one handler failed never
 * re-runs the handlers that already succeeded. The request hash is the payload's fingerprint: the same event id with
 * another payload is a conflict and is dead-lettered. Thread-safe.
 */
public final class EventDispatcher {

    static final StoredResponse HANDLED = StoredResponse.of(200, null, new byte[0]);

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final IdempotencyStore store;
    private final TransactionTemplate transactional;
    private final TransactionTemplate outside;
    private final Map<String, List<HandlerRegistration>> handlers = new LinkedHashMap<>();
    private final ClaimPolicy policy;
    private final DispatchListener listener;

    public EventDispatcher(IdempotencyStore store, PlatformTransactionManager transactions, List<HandlerRegistration> registrations,
                           ClaimPolicy policy) {
        this(store, transactions, registrations, policy, DispatchListener.NONE);
    }

    public EventDispatcher(IdempotencyStore store, PlatformTransactionManager transactions, List<HandlerRegistration> registrations,
                           ClaimPolicy policy, DispatchListener listener) {
        this.store = store;
        this.transactional = new TransactionTemplate(transactions);
        this.transactional.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        this.outside = new TransactionTemplate(transactions);
        this.outside.setPropagationBehavior(TransactionDefinition.PROPAGATION_NOT_SUPPORTED);
        this.policy = policy;
        this.listener = listener;
        for (HandlerRegistration r : registrations) {
            handlers.computeIfAbsent(r.eventType() + ":v" + r.eventVersion(), k -> new java.util.ArrayList<>()).add(r);
        }
    }

    /**
     * Handles one record with every matching handler.
     *
     * @throws PoisonEventException when the record can never be handled
     * @throws HandlerFailedException when a handler failed; handlers that succeeded are not run again on retry
     */
    public void dispatch(ConsumerRecord<String, byte[]> record) {
        Envelope envelope = Envelope.read(record);
        List<HandlerRegistration> matching = handlers.get(envelope.eventType() + ":v" + envelope.eventVersion());
        if (matching == null) {
            throw new PoisonEventException("No handler for " + envelope.eventType() + " v" + envelope.eventVersion());
        }
        List<HandlerFailedException> failures = new java.util.ArrayList<>();
        for (HandlerRegistration registration : matching) {
            try {
                run(registration, envelope);
            } catch (HandlerFailedException e) {
                failures.add(e); // the other handlers still run: one failing never holds another back
            } catch (dev.once.idempotency.InvalidScopeException | dev.once.idempotency.IdempotencyKeyException e) {
                throw new PoisonEventException("Headers cannot scope a claim: " + e.getMessage());
            } catch (dev.once.idempotency.RequestBodyException e) {
                throw new PoisonEventException("Payload has no exact fingerprint (" + e.problem().code() + "): "
                        + e.getMessage());
            }
        }
        if (!failures.isEmpty()) {
            HandlerFailedException all = new HandlerFailedException(
                    failures.stream().map(HandlerFailedException::handlerKey).toList(), failures.get(0).getCause());
            failures.stream().skip(1).forEach(f -> all.addSuppressed(f.getCause()));
            throw all;
        }
    }

    private void run(HandlerRegistration registration, Envelope envelope) {
        IdempotencyScope scope = IdempotencyScope.of(envelope.tenantId(), envelope.actorId(), registration.route(),
                envelope.eventId().toString());
        String hash = RequestFingerprint.ofPayload(registration.route(), envelope.contentType(), envelope.payload());
        HandledEvent event = envelope.toEvent(registration.handlerKey());
        if (registration.mode() == HandlerMode.TRANSACTIONAL) {
            transactional.executeWithoutResult(tx -> {
                ClaimResult claim = store.claim(scope, hash, policy);
                if (claim instanceof ClaimResult.Claimed c) {
                    invoke(registration, event);
                    store.markSucceeded(c.token(), HANDLED).orThrow(c.token());
                } else {
                    settled(registration, claim);
                }
            });
            return;
        }
        ClaimResult claim = claimLeased(scope, hash);
        if (claim instanceof ClaimResult.Claimed c) {
            try {
                invoke(registration, event);
            } catch (HandlerFailedException e) {
                outside.executeWithoutResult(s -> store.release(c.token()));
                throw e;
            }
            outside.executeWithoutResult(s -> store.markSucceeded(c.token(), HANDLED).orThrow(c.token()));
        } else {
            settled(registration, claim);
        }
    }

    /**
     * Claims for a LEASED handler. While another consumer holds the lease (a redelivery after a rebalance, or a
     * consumer that died mid-handler), this delivery waits for the lease to lapse or the claim to settle, by the
     * database clock, rather than spending retry attempts: the partition waits, which keeps its order.
     */
    private ClaimResult claimLeased(IdempotencyScope scope, String hash) {
        while (true) {
            ClaimResult claim = outside.execute(s -> store.claim(scope, hash, policy));
            if (!(claim instanceof ClaimResult.InProgress p)) {
                return claim;
            }
            long pause = Math.max(20, Math.min(p.retryAfter().toMillis(), 1_000));
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return claim;
            }
        }
    }

    /**
     * Handles a whole poll. Runs of records whose handlers are all TRANSACTIONAL are handled in one transaction, with
     * their fresh keys claimed by one multi-row statement and completed by one update; anything else (LEASED handlers,
     * poison, redeliveries that need the full claim) goes record by record. When a run fails, it is rolled back and
     * replayed record by record, so that the records before the failing one are handled and committed on their own.
     *
     * @throws org.springframework.kafka.listener.BatchListenerFailedException naming the index of the record that failed
     */
    public void dispatchBatch(List<ConsumerRecord<String, byte[]>> records) {
        int i = 0;
        while (i < records.size()) {
            int end = i;
            List<Envelope> run = new java.util.ArrayList<>();
            while (end < records.size()) {
                Envelope envelope = batchable(records.get(end));
                if (envelope == null) {
                    break;
                }
                run.add(envelope);
                end++;
            }
            if (!run.isEmpty()) {
                try {
                    transactional.executeWithoutResult(tx -> handleRun(run));
                } catch (RuntimeException e) {
                    for (int k = i; k < end; k++) {
                        dispatchAt(records, k);
                    }
                }
                i = end;
            } else {
                dispatchAt(records, i);
                i++;
            }
        }
    }

    private void dispatchAt(List<ConsumerRecord<String, byte[]>> records, int index) {
        try {
            dispatch(records.get(index));
        } catch (PoisonEventException | HandlerFailedException e) {
            throw new org.springframework.kafka.listener.BatchListenerFailedException(e.getMessage(), e, index);
        }
    }

    /** The record's envelope when all its handlers are TRANSACTIONAL and it parses; {@code null} otherwise. */
    private Envelope batchable(ConsumerRecord<String, byte[]> record) {
        try {
            Envelope envelope = Envelope.read(record);
            List<HandlerRegistration> matching = handlers.get(envelope.eventType() + ":v" + envelope.eventVersion());
            if (matching == null || matching.stream().anyMatch(r -> r.mode() != HandlerMode.TRANSACTIONAL)) {
                return null;
            }
            return envelope;
        } catch (PoisonEventException e) {
            return null;
        }
    }

    /** One transaction for a run: bulk-claim fresh keys, run handlers in record order, bulk-complete. */
    private void handleRun(List<Envelope> run) {
        List<HandlerRegistration> pairsHandler = new java.util.ArrayList<>();
        List<Envelope> pairsEnvelope = new java.util.ArrayList<>();
        List<IdempotencyScope> scopes = new java.util.ArrayList<>();
        List<String> hashes = new java.util.ArrayList<>();
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (Envelope envelope : run) {
            for (HandlerRegistration registration : handlers.get(envelope.eventType() + ":v" + envelope.eventVersion())) {
                IdempotencyScope scope = IdempotencyScope.of(envelope.tenantId(), envelope.actorId(), registration.route(),
                        envelope.eventId().toString());
                if (!seen.add(scope.toString())) {
                    listener.skippedDuplicate(registration.handlerKey()); // the same event twice in one poll
                    continue;
                }
                pairsHandler.add(registration);
                pairsEnvelope.add(envelope);
                scopes.add(scope);
                hashes.add(RequestFingerprint.ofPayload(registration.route(), envelope.contentType(), envelope.payload()));
            }
        }
        List<dev.once.idempotency.ClaimToken> fresh = store.claimFresh(scopes, hashes, policy);
        List<dev.once.idempotency.ClaimToken> owned = new java.util.ArrayList<>(scopes.size());
        for (int p = 0; p < scopes.size(); p++) {
            dev.once.idempotency.ClaimToken token = fresh.get(p);
            if (token == null) {
                ClaimResult claim = store.claim(scopes.get(p), hashes.get(p), policy);
                if (!(claim instanceof ClaimResult.Claimed c)) {
                    settled(pairsHandler.get(p), claim);
                    continue;
                }
                token = c.token();
            }
            invoke(pairsHandler.get(p), pairsEnvelope.get(p).toEvent(pairsHandler.get(p).handlerKey()));
            owned.add(token);
        }
        if (store.markAllSucceeded(owned, HANDLED) != owned.size()) {
            throw new IllegalStateException("a claim of this batch was taken over; handling it record by record");
        }
    }

    /** What an existing claim means for this delivery: skip, wait, or poison. */
    private void settled(HandlerRegistration registration, ClaimResult claim) {
        if (claim instanceof ClaimResult.Conflict) {
            throw new PoisonEventException("Event id reused with another payload for " + registration.handlerKey()
                    + " (IDEMPOTENCY_KEY_CONFLICT)");
        }
        if (claim instanceof ClaimResult.InProgress p) {
            throw new HandlerFailedException(registration.handlerKey(),
                    new IllegalStateException("another consumer holds this event for " + p.retryAfter()));
        }
        // Replay: already handled; Failed: dead-lettered before, re-run only when an operator retries it
        listener.skippedDuplicate(registration.handlerKey());
    }

    DispatchListener listener() {
        return listener;
    }

    private void invoke(HandlerRegistration registration, HandledEvent event) {
        long start = System.nanoTime();
        try {
            registration.handler().handle(event);
        } catch (Exception e) {
            listener.failed(registration.handlerKey());
            throw new HandlerFailedException(registration.handlerKey(), e);
        }
        listener.handled(registration.handlerKey(), Duration.ofNanos(System.nanoTime() - start));
    }

    /** Marks the failed handler's claim {@code failed} after the last retry, so redeliveries do not re-run it. */
    void markFailed(ConsumerRecord<String, byte[]> record, HandlerFailedException failure) {
        Envelope envelope = Envelope.read(record);
        List<HandlerRegistration> matching = handlers.getOrDefault(envelope.eventType() + ":v" + envelope.eventVersion(), List.of());
        for (HandlerRegistration registration : matching) {
            if (!failure.handlerKeys().contains(registration.handlerKey())) {
                continue;
            }
            IdempotencyScope scope = IdempotencyScope.of(envelope.tenantId(), envelope.actorId(), registration.route(),
                    envelope.eventId().toString());
            String hash = RequestFingerprint.ofPayload(registration.route(), envelope.contentType(), envelope.payload());
            outside.executeWithoutResult(s -> {
                ClaimResult claim = store.claim(scope, hash, policy);
                if (claim instanceof ClaimResult.Claimed c) {
                    store.markFailed(c.token(), StoredResponse.of(500, "text/plain", String.valueOf(failure.getCause())));
                }
            });
        }
    }

    /** The parts of a record the dispatcher needs, validated. */
    record Envelope(UUID eventId, String tenantId, String actorId, String eventType, int eventVersion, byte[] payload,
                    String contentType, Map<String, String> headers) {

        static Envelope read(ConsumerRecord<String, byte[]> record) {
            Map<String, String> headers = new LinkedHashMap<>();
            for (Header h : record.headers()) {
                headers.put(h.key(), h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8));
            }
            UUID id;
            try {
                id = UUID.fromString(required(headers, WireFormat.EVENT_ID));
            } catch (IllegalArgumentException e) {
                throw new PoisonEventException("Header " + WireFormat.EVENT_ID + " is not a UUID");
            }
            int version;
            try {
                version = Integer.parseInt(required(headers, WireFormat.EVENT_VERSION));
            } catch (NumberFormatException e) {
                throw new PoisonEventException("Header " + WireFormat.EVENT_VERSION + " is not a number");
            }
            byte[] payload = record.value();
            if (payload == null) {
                throw new PoisonEventException("Record has no payload");
            }
            // Relays of earlier versions wrote no content-type for their JSON payloads.
            String contentType = headers.getOrDefault(WireFormat.CONTENT_TYPE, OutboxEvent.JSON_CONTENT_TYPE);
            if (OutboxEvent.isJson(contentType)) {
                try {
                    JSON.readTree(payload);
                } catch (JacksonException e) {
                    throw new PoisonEventException("Payload is not JSON: " + e.getOriginalMessage());
                }
            }
            return new Envelope(id, required(headers, WireFormat.TENANT_ID), required(headers, WireFormat.ACTOR_ID),
                    required(headers, WireFormat.EVENT_TYPE), version, payload, contentType, headers);
        }

        private static String required(Map<String, String> headers, String name) {
            String value = headers.get(name);
            if (value == null || value.isBlank()) {
                throw new PoisonEventException("Header " + name + " is missing");
            }
            return value;
        }

        HandledEvent toEvent(String handlerKey) {
            return new HandledEvent(eventId, tenantId, actorId, eventType, eventVersion, payload, contentType, headers,
                    eventId + ":" + handlerKey);
        }
    }
}
