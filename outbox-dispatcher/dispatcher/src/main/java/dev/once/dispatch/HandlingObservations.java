package dev.once.dispatch;

import dev.once.idempotency.ClaimResult;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.Kind;
import io.micrometer.observation.transport.Propagator;
import io.micrometer.observation.transport.ReceiverContext;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * Each handler's turn at one event as the observation {@value EventDispatcher#OBSERVATION}, tagged {@code handler}
 * and {@code outcome}: {@code handled}, {@code skipped} (handled before: a redelivery), {@code failed}, or
 * {@code rolled_back} (its attempt rolled back for another handler's failure and is attempted again, smaller). With a
 * tracer it is a consumer span whose parent is the span the event was appended in, restored from the record's trace
 * headers, and current while the handler runs; without one, {@link Observation#NOOP} at no cost.
 */
final class HandlingObservations {

    private static final Propagator.Getter<Headers> HEADERS = (headers, name) -> {
        Header header = headers.lastHeader(name);
        return header == null ? null : new String(header.value(), StandardCharsets.UTF_8);
    };

    private final ObservationRegistry registry;

    HandlingObservations(ObservationRegistry registry) {
        this.registry = registry;
    }

    /** The started observation of {@code claim}'s handler at its event. */
    Observation start(Delivery.Claim claim) {
        if (registry.isNoop()) {
            return Observation.NOOP;
        }
        ReceiverContext<Headers> context = new ReceiverContext<>(HEADERS, Kind.CONSUMER);
        context.setCarrier(claim.delivery().record().headers());
        context.setRemoteServiceName("kafka");
        return Observation.createNotStarted(EventDispatcher.OBSERVATION, () -> context, registry)
                .lowCardinalityKeyValue("handler", claim.handlerKey())
                .highCardinalityKeyValue("once.event.id", claim.delivery().message().id().toString())
                .highCardinalityKeyValue("messaging.destination.name", claim.delivery().record().topic())
                .start();
    }

    static void stop(Observation observation, String outcome) {
        observation.lowCardinalityKeyValue("outcome", outcome).stop();
    }

    static void failed(Observation observation, Throwable failure) {
        observation.error(failure);
        stop(observation, "failed");
    }

    /** {@link Settled#of} within {@code observation}: what it throws ends the observation as failed. */
    static void settled(Observation observation, Delivery.Claim claim, ClaimResult result) {
        try {
            Settled.of(claim, result);
        } catch (RuntimeException e) {
            failed(observation, e);
            throw e;
        }
    }
}
