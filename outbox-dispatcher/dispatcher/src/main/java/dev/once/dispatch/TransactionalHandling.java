package dev.once.dispatch;

import dev.once.OnceException;
import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.ClaimResult;
import dev.once.idempotency.ClaimToken;
import dev.once.idempotency.HandlerClaimStore;
import dev.once.spi.TransientFailures;
import io.micrometer.observation.Observation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * TRANSACTIONAL handlers: a claim, the handler's writes and the completion commit in one transaction, so an effect
 * exists exactly when its claim says it does. A group of claims (a run of records, one record, one handler) is
 * attempted in one transaction: fresh keys claimed already completed by one multi-row statement (one write per claim:
 * nobody can see a claim of an uncommitted transaction in progress, and a concurrent duplicate waits on the unique
 * key, then finds it completed), existing ones by the full claim (replay, conflict, reclaim) and completed by one
 * update, the handlers run in record order. When the
 * attempt fails it is rolled back and attempted smaller (each record alone, then each handler of a failing record
 * alone), so that what can commit does, one failing handler never holds another back, and the failure found is the
 * handler's own. A transient failure (the database's, also when a handler's own statement meets it) is not split and
 * is never a handler's failure: nothing can commit until it passes, and the record is retried in place. A batch
 * handler ({@link HandlerRegistration#transactionalBatch}) is called once per attempt with its claimed events, after
 * the per-event handlers, before the claims complete; split attempts hand it fewer.
 */
final class TransactionalHandling {

    /** The first failure met, and at which delivery; {@code null} from {@link #handle} when everything committed. */
    record Failure(Delivery delivery, RuntimeException cause) {
    }

    private final HandlerClaimStore store;
    private final TransactionTemplate transactions;
    private final ClaimPolicy policy;
    private final DispatchListener listener;
    private final HandlingObservations observations;

    TransactionalHandling(HandlerClaimStore store, PlatformTransactionManager transactions, ClaimPolicy policy,
                          DispatchListener listener, HandlingObservations observations) {
        this.store = store;
        this.transactions = new TransactionTemplate(transactions);
        this.transactions.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        this.policy = policy;
        this.listener = listener;
        this.observations = observations;
    }

    /**
     * Handles the TRANSACTIONAL claims of {@code run}, in order; commits everything before the first delivery that
     * fails and returns that failure, or {@code null}.
     */
    Failure handle(List<Delivery> run) {
        List<Delivery.Claim> all = new ArrayList<>();
        run.forEach(d -> all.addAll(d.claims(HandlerMode.TRANSACTIONAL)));
        RuntimeException failure = attempt(all);
        if (failure == null) {
            return null;
        }
        if (TransientFailures.isTransient(failure)) {
            return new Failure(run.get(0), failure);
        }
        for (Delivery delivery : run) {
            // a run of one was just attempted as that record: go on to its handlers alone
            RuntimeException own = run.size() == 1 ? split(delivery, failure) : split(delivery, attempt(claimsOf(delivery)));
            if (own != null) {
                return new Failure(delivery, own);
            }
        }
        return null; // every record committed on its own: the run's failure was a race between them
    }

    private static List<Delivery.Claim> claimsOf(Delivery delivery) {
        return delivery.claims(HandlerMode.TRANSACTIONAL);
    }

    /** After a delivery's claims failed together: each handler alone, unless there is one or the failure is transient. */
    private RuntimeException split(Delivery delivery, RuntimeException together) {
        List<Delivery.Claim> claims = claimsOf(delivery);
        if (together == null || claims.size() == 1 || TransientFailures.isTransient(together)) {
            return together;
        }
        return alone(claims);
    }

    /** A record's failing claims found one by one, as one failure naming each handler that failed. */
    RuntimeException alone(List<Delivery.Claim> claims) {
        List<HandlerFailedException> failed = new ArrayList<>();
        for (Delivery.Claim claim : claims) {
            RuntimeException failure = attempt(List.of(claim));
            if (failure instanceof HandlerFailedException handler) {
                failed.add(handler);
            } else if (failure != null) {
                return failure; // poison or the database's: the record's, not one handler's
            }
        }
        return failed.isEmpty() ? null : HandlerFailedException.of(failed);
    }

    /**
     * One transaction for {@code claims}; the outcomes are told once it committed, a lone claim's failure at once.
     * Returns the failure that rolled it back, or {@code null}.
     */
    private RuntimeException attempt(List<Delivery.Claim> claims) {
        if (claims.isEmpty()) {
            return null;
        }
        Outcomes outcomes = new Outcomes();
        try {
            transactions.executeWithoutResult(tx -> run(claims, outcomes));
        } catch (RuntimeException e) {
            outcomes.rolledBack();
            if (e instanceof HandlerFailedException failed && TransientFailures.isTransient(failed)) {
                // the database failed under the handler's own statement (a deadlock, a serialization failure, a lost
                // connection): the same database as the claim's, so not the handler's failure; retried in place
                return new OnceException("The database failed under handler " + failed.handlerKey() + ": "
                        + failed.getCause(), failed.getCause());
            }
            if (claims.size() == 1 && e instanceof HandlerFailedException failed) {
                listener.failed(failed.handlerKey()); // a failure of the handler itself, counted once
            }
            return e;
        }
        outcomes.fire(listener);
        return null;
    }

    private void run(List<Delivery.Claim> claims, Outcomes outcomes) {
        List<Delivery.Claim> unique = new ArrayList<>(claims.size());
        Set<String> seen = new HashSet<>();
        for (Delivery.Claim claim : claims) {
            if (seen.add(claim.scope().toString())) {
                unique.add(claim);
            } else {
                outcomes.skipped(claim.handlerKey(), observations.start(claim)); // the same event twice in one poll
            }
        }
        // one write per fresh claim: inserted completed, in the transaction its handler's writes commit in
        boolean[] fresh = store.claimCompleted(unique.stream().map(Delivery.Claim::scope).toList(),
                unique.stream().map(Delivery.Claim::requestHash).toList(), policy);
        List<ClaimToken> reclaimed = new ArrayList<>();
        Map<HandlerRegistration, List<Delivery.Claim>> batches = new LinkedHashMap<>();
        for (int i = 0; i < unique.size(); i++) {
            Delivery.Claim claim = unique.get(i);
            if (!fresh[i]) {
                ClaimResult result = store.claim(claim.scope(), claim.requestHash(), policy);
                if (!(result instanceof ClaimResult.Claimed c)) {
                    Observation observation = observations.start(claim);
                    HandlingObservations.settled(observation, claim, result);
                    outcomes.skipped(claim.handlerKey(), observation);
                    continue;
                }
                reclaimed.add(c.token()); // failed, expired or lapsed before: completed below
            }
            if (claim.registration().batch() != null) {
                batches.computeIfAbsent(claim.registration(), r -> new ArrayList<>()).add(claim);
            } else {
                Observation observation = observations.start(claim);
                outcomes.handled(claim.handlerKey(), Handlers.invoke(claim, observation), observation);
            }
        }
        // a batch handler's events, in record order, in one call, before the claims complete
        batches.values().forEach(batch -> Handlers.invokeBatch(batch, observations, outcomes));
        if (store.markAllSucceeded(reclaimed) != reclaimed.size()) {
            throw new IllegalStateException("a claim of this attempt was taken over meanwhile; attempting it smaller");
        }
    }

    /**
     * Runs a claim's handler with its observation current; its exception becomes the handler's failure and ends the
     * observation as {@code failed}. The caller ends it otherwise, once the outcome is final.
     */
    static final class Handlers {

        private Handlers() {
        }

        static Duration invoke(Delivery.Claim claim, Observation observation) {
            long start = System.nanoTime();
            try (Observation.Scope scope = observation.openScope()) {
                claim.registration().handler().handle(claim.event());
            } catch (Exception | LinkageError | AssertionError | StackOverflowError e) { // a handler's bugs alike
                HandlingObservations.failed(observation, e);
                throw new HandlerFailedException(claim.handlerKey(), e);
            }
            return Duration.ofNanos(System.nanoTime() - start);
        }

        /**
         * Runs a batch handler once for {@code claims} (all of one registration, none handled before); each event's
         * observation ends with the call's outcome, and each is told handled with an equal share of its time.
         */
        static void invokeBatch(List<Delivery.Claim> claims, HandlingObservations observations, Outcomes outcomes) {
            List<Observation> started = claims.stream().map(observations::start).toList();
            List<HandledEvent> events = claims.stream().map(Delivery.Claim::event).toList();
            long start = System.nanoTime();
            try {
                claims.get(0).registration().batch().handle(events);
            } catch (Exception | LinkageError | AssertionError | StackOverflowError e) {
                started.forEach(o -> HandlingObservations.failed(o, e));
                throw new HandlerFailedException(claims.get(0).handlerKey(), e);
            }
            Duration each = Duration.ofNanos((System.nanoTime() - start) / claims.size());
            for (int i = 0; i < claims.size(); i++) {
                outcomes.handled(claims.get(i).handlerKey(), each, started.get(i));
            }
        }
    }
}
