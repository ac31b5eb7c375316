package dev.once.dispatch;

import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.ClaimResult;
import dev.once.idempotency.HandlerClaimStore;
import io.micrometer.observation.Observation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * LEASED handlers, for effects outside the database: the claim commits first with a lease, the handler runs, then the
 * claim completes, each outside any transaction. While another consumer holds the lease (a redelivery after a
 * rebalance, or a consumer that died mid-handler) the delivery waits, by the database clock, for the lease to lapse or
 * the claim to settle, rather than spending retry attempts: the partition waits, which keeps its order. A handler
 * that fails releases its claim, so the retry runs it again with the same derived key.
 */
final class LeasedHandling {

    private final HandlerClaimStore store;
    private final TransactionTemplate outside;
    private final ClaimPolicy policy;
    private final DispatchListener listener;
    private final HandlingObservations observations;

    LeasedHandling(HandlerClaimStore store, PlatformTransactionManager transactions, ClaimPolicy policy,
                   DispatchListener listener, HandlingObservations observations) {
        this.store = store;
        this.outside = new TransactionTemplate(transactions);
        this.outside.setPropagationBehavior(TransactionDefinition.PROPAGATION_NOT_SUPPORTED);
        this.policy = policy;
        this.listener = listener;
        this.observations = observations;
    }

    /** Runs each LEASED claim of {@code delivery}; returns the handlers' failures as one, or {@code null}. */
    RuntimeException handle(Delivery delivery) {
        List<HandlerFailedException> failed = new ArrayList<>();
        for (Delivery.Claim claim : delivery.claims(HandlerMode.LEASED)) {
            try {
                run(claim);
            } catch (HandlerFailedException e) {
                listener.failed(e.handlerKey());
                failed.add(e);
            }
        }
        return failed.isEmpty() ? null : HandlerFailedException.of(failed);
    }

    private void run(Delivery.Claim claim) {
        ClaimResult result = claim(claim);
        Observation observation = observations.start(claim);
        if (!(result instanceof ClaimResult.Claimed c)) {
            HandlingObservations.settled(observation, claim, result);
            HandlingObservations.stop(observation, "skipped");
            listener.skippedDuplicate(claim.handlerKey());
            return;
        }
        Duration elapsed;
        try {
            elapsed = TransactionalHandling.Handlers.invoke(claim, observation);
        } catch (HandlerFailedException e) {
            outside.executeWithoutResult(s -> store.release(c.token()));
            throw e;
        }
        try {
            outside.executeWithoutResult(s -> store.markSucceeded(c.token()).orThrow(c.token()));
        } catch (RuntimeException e) {
            HandlingObservations.failed(observation, e);
            throw e;
        }
        HandlingObservations.stop(observation, "handled");
        listener.handled(claim.handlerKey(), elapsed);
    }

    private ClaimResult claim(Delivery.Claim claim) {
        while (true) {
            ClaimResult result = outside.execute(s -> store.claim(claim.scope(), claim.requestHash(), policy));
            if (!(result instanceof ClaimResult.InProgress p)) {
                return result;
            }
            long pause = Math.max(20, Math.min(p.retryAfter().toMillis(), 1_000));
            LockSupport.parkNanos(Duration.ofMillis(pause).toNanos());
            if (Thread.currentThread().isInterrupted()) {
                return result; // the consumer stops: the claim is settled, or is retried, after the next assignment
            }
        }
    }
}
