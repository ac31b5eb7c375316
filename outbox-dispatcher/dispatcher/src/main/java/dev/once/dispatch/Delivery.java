package dev.once.dispatch;

import dev.once.idempotency.IdempotencyKeyException;
import dev.once.idempotency.IdempotencyScope;
import dev.once.idempotency.InvalidScopeException;
import dev.once.idempotency.RequestBodyException;
import dev.once.idempotency.RequestFingerprint;
import dev.once.wire.MalformedRecordException;
import dev.once.wire.OutboxCodec;
import dev.once.wire.OutboxMessage;
import dev.once.wire.RecordSigning;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * One record as the dispatcher handles it, worked out once: its message and the claim of each handler registered for
 * its event type and version; or why it can never be handled ({@link #poison}); or that no handler takes it and what
 * the {@link UnhandledPolicy} says to do ({@link #unhandled}: skip or hold; dead-letter makes it poison).
 *
 * @param index the record's position in its poll
 */
record Delivery(int index, ConsumerRecord<String, byte[]> record, OutboxMessage message, List<Claim> claims,
                PoisonEventException poison, Unhandled unhandled) {

    /** Why no handler takes an event ({@link #FOREIGN_TYPE} or {@link #UNKNOWN_VERSION}), and what is done. */
    record Unhandled(String reason, UnhandledPolicy.Action action) {
        static final String FOREIGN_TYPE = "foreign_type";
        static final String UNKNOWN_VERSION = "unknown_version";
    }

    /** The handlers by event type and version, the types they take in any version, and the policy for the rest. */
    record Handlers(Map<String, List<HandlerRegistration>> byKey, Set<String> types, UnhandledPolicy policy) {

        static Handlers of(List<HandlerRegistration> registrations, UnhandledPolicy policy) {
            Map<String, List<HandlerRegistration>> byKey = new LinkedHashMap<>();
            Set<String> types = new HashSet<>();
            for (HandlerRegistration r : registrations) {
                byKey.computeIfAbsent(HandlerRegistration.key(r.eventType(), r.eventVersion()), k -> new ArrayList<>()).add(r);
                types.add(r.eventType());
            }
            return new Handlers(byKey, types, policy);
        }
    }

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
            OutboxMessage m = delivery.message();
            return new HandledEvent(m.id(), m.tenantId(), m.actorId(), m.eventType(), m.eventVersion(), m.payload(),
                    m.contentType(), m.headers(), m.id() + ":" + registration.handlerKey());
        }
    }

    static Delivery of(int index, ConsumerRecord<String, byte[]> record, Handlers handlers, RecordSigning signing) {
        RecordSigning.Verdict verdict = signing.verify(record);
        if (!verdict.accepted()) {
            return poison(index, record, null, new SignatureRejectedException(verdict, record));
        }
        OutboxMessage message;
        try {
            message = OutboxCodec.read(record);
        } catch (MalformedRecordException e) {
            return poison(index, record, null, new PoisonEventException(e.getMessage()));
        }
        List<HandlerRegistration> matching = handlers.byKey().get(
                HandlerRegistration.key(message.eventType(), message.eventVersion()));
        if (matching == null) {
            boolean known = handlers.types().contains(message.eventType());
            UnhandledPolicy.Action action = handlers.policy().decide(record.topic(), message.eventType(), known);
            if (action == UnhandledPolicy.Action.DEAD_LETTER) {
                return poison(index, record, message, new PoisonEventException(
                        "No handler for " + message.eventType() + " v" + message.eventVersion()));
            }
            return new Delivery(index, record, message, List.of(), null,
                    new Unhandled(known ? Unhandled.UNKNOWN_VERSION : Unhandled.FOREIGN_TYPE, action));
        }
        List<Claim> claims = new ArrayList<>(matching.size());
        Delivery delivery = new Delivery(index, record, message, claims, null, null);
        try {
            // canonicalised once, hashed under each handler's route
            RequestFingerprint.Payload payload = RequestFingerprint.payload(message.contentType(), message.payload());
            for (HandlerRegistration registration : matching) {
                IdempotencyScope scope = IdempotencyScope.of(message.tenantId(), message.actorId(),
                        registration.route(), message.id().toString());
                claims.add(new Claim(delivery, registration, scope, payload.under(registration.route())));
            }
        } catch (InvalidScopeException | IdempotencyKeyException e) {
            return poison(index, record, message, new PoisonEventException("Headers cannot scope a claim: "
                    + e.getMessage()));
        } catch (RequestBodyException e) {
            return poison(index, record, message, new PoisonEventException(
                    "Payload is not JSON as its content-type says (" + e.problem().code() + "): " + e.getMessage()));
        }
        return delivery;
    }

    private static Delivery poison(int index, ConsumerRecord<String, byte[]> record, OutboxMessage message,
                                   PoisonEventException poison) {
        return new Delivery(index, record, message, List.of(), poison, null);
    }

    /** Whether the policy says to hold this unhandled event. */
    boolean held() {
        return unhandled != null && unhandled.action() == UnhandledPolicy.Action.HOLD;
    }

    /** Whether the policy says to skip this unhandled event. */
    boolean skipped() {
        return unhandled != null && unhandled.action() == UnhandledPolicy.Action.SKIP;
    }

    /**
     * This delivery with only the claims of {@code handlerKeys}; itself when {@code handlerKeys} is empty or names none
     * of its handlers.
     */
    Delivery onlyFor(Set<String> handlerKeys) {
        List<Claim> only = claims.stream().filter(c -> handlerKeys.contains(c.handlerKey())).toList();
        return only.isEmpty() ? this : new Delivery(index, record, message, only, poison, unhandled);
    }

    /** The claims of handlers of {@code mode}. */
    List<Claim> claims(HandlerMode mode) {
        return claims.stream().filter(c -> c.registration().mode() == mode).toList();
    }
}
