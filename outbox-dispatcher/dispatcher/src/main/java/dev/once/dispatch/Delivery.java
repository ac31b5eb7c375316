package dev.once.dispatch;

import dev.once.idempotency.IdempotencyKeyException;
import dev.once.idempotency.IdempotencyScope;
import dev.once.idempotency.InvalidScopeException;
import dev.once.idempotency.RequestBodyException;
import dev.once.idempotency.RequestFingerprint;
import dev.once.wire.RecordSigning;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * One record as the dispatcher handles it, worked out once: its envelope and the claim of each handler registered for
 * its event type and version, or why it can never be handled ({@link #poison}).
 *
 * @param index the record's position in its poll
 */
record Delivery(int index, ConsumerRecord<String, byte[]> record, Envelope envelope, List<Claim> claims,
                PoisonEventException poison) {

    /**
     * What one handler claims before it runs: tenant + actor + {@code <event_type>:v<version>:<handler_key>} +
     * event id, with the payload's fingerprint as request hash (the same event id with another payload is a
     * conflict).
     */
    record Claim(Delivery delivery, HandlerRegistration registration, IdempotencyScope scope, String requestHash) {

        String handlerKey() {
            return registration.handlerKey();
        }

        HandledEvent event() {
            return delivery.envelope().toEvent(registration.handlerKey());
        }
    }

    static Delivery of(int index, ConsumerRecord<String, byte[]> record, Map<String, List<HandlerRegistration>> handlers,
                       RecordSigning signing) {
        RecordSigning.Verdict verdict = signing.verify(record);
        if (!verdict.accepted()) {
            return new Delivery(index, record, null, List.of(), new SignatureRejectedException(verdict, record));
        }
        Envelope envelope;
        try {
            envelope = Envelope.read(record);
        } catch (PoisonEventException e) {
            return new Delivery(index, record, null, List.of(), e);
        }
        List<HandlerRegistration> matching = handlers.get(envelope.handlersKey());
        if (matching == null) {
            return new Delivery(index, record, envelope, List.of(), new PoisonEventException(
                    "No handler for " + envelope.eventType() + " v" + envelope.eventVersion()));
        }
        List<Claim> claims = new ArrayList<>(matching.size());
        Delivery delivery = new Delivery(index, record, envelope, claims, null);
        try {
            for (HandlerRegistration registration : matching) {
                IdempotencyScope scope = IdempotencyScope.of(envelope.tenantId(), envelope.actorId(),
                        registration.route(), envelope.eventId().toString());
                claims.add(new Claim(delivery, registration, scope, RequestFingerprint.ofPayload(registration.route(),
                        envelope.contentType(), envelope.payload())));
            }
        } catch (InvalidScopeException | IdempotencyKeyException e) {
            return new Delivery(index, record, envelope, List.of(),
                    new PoisonEventException("Headers cannot scope a claim: " + e.getMessage()));
        } catch (RequestBodyException e) {
            return new Delivery(index, record, envelope, List.of(), new PoisonEventException(
                    "Payload is not JSON as its content-type says (" + e.problem().code() + "): " + e.getMessage()));
        }
        return delivery;
    }

    /** The claims of handlers of {@code mode}. */
    List<Claim> claims(HandlerMode mode) {
        return claims.stream().filter(c -> c.registration().mode() == mode).toList();
    }
}
