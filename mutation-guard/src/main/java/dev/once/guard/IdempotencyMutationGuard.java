package dev.once.guard;

import dev.once.guard.internal.RateLimitedLog;
import dev.once.idempotency.ClaimResult;
import dev.once.idempotency.ClaimToken;
import dev.once.idempotency.IdempotencyStore;
import dev.once.idempotency.ResponseTooLargeException;
import dev.once.idempotency.StaleClaimException;
import dev.once.idempotency.StoredResponse;
import dev.once.outbox.OutboxTracing;
import dev.once.spi.CurrentOutbox;
import dev.once.spi.TransientFailures;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The explicit call pattern for high-risk writes (create an account, confirm an upload, submit a task): a duplicate
 * request replays the first response and never runs the work again.
 *
 * <ol>
 *   <li><b>Claim</b> the key outside any transaction, in one statement. A duplicate gets the stored response, an
 *       in-progress answer or a conflict, and the handler is not called.</li>
 *   <li><b>Work</b> in one new transaction: the handler's writes, then its outbox rows, task binding and
 *       {@code markSucceeded} with the response: on an {@link dev.once.OnceDataSource} sent with the {@code COMMIT}
 *       (the outbox rows, then the completion, which fails the commit if the claim no longer holds the record),
 *       otherwise written together by one statement that inserts the rows only if the claim still holds it. A crash anywhere leaves all of it or none; the record then stays
 *       {@code processing} until its lease lapses and a retry reclaims it.</li>
 *   <li><b>Failure:</b> when the handler throws or answers 400 or more, its transaction rolls back and the record is
 *       marked {@code failed} in a transaction of its own, with the error response, which repeats replay. Transient
 *       statuses (429, 503 by default) are not stored: the claim is released and a repeat runs again. Neither is a
 *       refusal of the work's writes for the request's content (SQLState class 22, answered 400
 *       {@code REQUEST_DATA_REJECTED}, or 23, answered 409 {@code REQUEST_CONSTRAINT_VIOLATED}): nothing took effect,
 *       the claim is released, and the same key may be used again.</li>
 * </ol>
 * Any transaction the caller has open is suspended while the guard runs. Thread-safe.
 */
public final class IdempotencyMutationGuard {

    private static final Logger log = LoggerFactory.getLogger(IdempotencyMutationGuard.class);
    /** A handler or a database that fails for every request must not log a stack trace for each. */
    private static final RateLimitedLog rateLimited = new RateLimitedLog(log);

    private final IdempotencyStore store;
    private final TransactionTemplate work;
    private final TransactionTemplate outside;
    private final FailureMapper failures;
    private final GuardListener listener;
    private final ObservationRegistry observations;
    private final OutboxTracing tracing;
    /** What {@link MutationContext#event}'s builders serialise object payloads with; {@code null}: the defaults. */
    private final tools.jackson.databind.json.JsonMapper json;

    public IdempotencyMutationGuard(IdempotencyStore store, PlatformTransactionManager transactions,
                                    FailureMapper failures, GuardListener listener) {
        this(store, transactions, failures, listener, ObservationRegistry.NOOP, OutboxTracing.NONE);
    }

    /**
     * @param observations each run is the observation {@value #OBSERVATION}, tagged {@code route} and
     *        {@code outcome} (claimed, replayed, failed, in_progress, conflict): with a tracer a span around the
     *        handler's work, with a meter registry a timer; {@link ObservationRegistry#NOOP}, nothing
     * @param tracing carries the trace context current at {@link MutationContext#append} with each event
     */
    public IdempotencyMutationGuard(IdempotencyStore store, PlatformTransactionManager transactions,
                                    FailureMapper failures, GuardListener listener, ObservationRegistry observations,
                                    OutboxTracing tracing) {
        this(store, transactions, failures, listener, observations, tracing, null);
    }

    /**
     * As above; {@link MutationContext#event}'s builders serialise object payloads with {@code json}, the
     * application's {@code JsonMapper} ({@code null}: Jackson's defaults).
     */
    public IdempotencyMutationGuard(IdempotencyStore store, PlatformTransactionManager transactions,
                                    FailureMapper failures, GuardListener listener, ObservationRegistry observations,
                                    OutboxTracing tracing, tools.jackson.databind.json.JsonMapper json) {
        this.json = json;
        this.store = store;
        this.work = new TransactionTemplate(transactions);
        this.work.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        this.outside = new TransactionTemplate(transactions);
        this.outside.setPropagationBehavior(TransactionDefinition.PROPAGATION_NOT_SUPPORTED);
        this.failures = failures;
        this.listener = listener;
        this.observations = observations;
        this.tracing = tracing;
    }

    /** The name of the guard's observation, and of its span. */
    public static final String OBSERVATION = "once.guard";

    /** Runs {@code handler} at most once for {@code request}'s key, as {@code policy} says. */
    public GuardResult run(MutationRequest request, IdempotencyPolicy policy, MutationHandler handler) {
        long start = System.nanoTime();
        Observation observation = Observation.createNotStarted(OBSERVATION, observations)
                .lowCardinalityKeyValue("route", request.scope().route().value()).start();
        GuardResult result;
        try (Observation.Scope scope = observation.openScope()) {
            Object claim = claimOrAnswer(request, policy);
            result = claim instanceof ClaimToken token ? execute(token, policy, handler) : (GuardResult) claim;
        } catch (RuntimeException e) {
            if (!TransientFailures.isTransient(e)) {
                observation.error(e).lowCardinalityKeyValue("outcome", "error").stop();
                throw e;
            }
            result = unavailable(request, e);
        }
        observation.lowCardinalityKeyValue("outcome", outcome(result)).stop();
        finished(result, start);
        return result;
    }

    /** The database is unreachable or restarting: nothing was decided, so the client may simply retry. */
    GuardResult unavailable(MutationRequest request, RuntimeException e) {
        rateLimited.warn("Guard for {} could not reach the database; answering 503", e, request.scope());
        return new GuardResult.Completed(UNAVAILABLE, null, null, false);
    }

    /** Reports a run that began at {@code startNanos} and ended with {@code result}. */
    void finished(GuardResult result, long startNanos) {
        listener.onRun(outcome(result), Duration.ofNanos(System.nanoTime() - startNanos));
    }

    /**
     * Claims {@code request}'s key outside any transaction: the {@link ClaimToken} when the work is ours to run, else
     * the answer ({@link GuardResult}): a replay, a conflict, or in progress once the policy's wait is over.
     */
    Object claimOrAnswer(MutationRequest request, IdempotencyPolicy policy) {
        long deadline = System.nanoTime() + policy.waitMax().toNanos();
        Duration pause = GuardDefaults.WAIT_POLL_MIN;
        while (true) {
            ClaimResult claim = outside.execute(s -> store.claim(request.scope(), request.requestHash(), policy.claimPolicy()));
            if (claim instanceof ClaimResult.Claimed c) {
                listener.onOutcome("claimed");
                return c.token();
            }
            if (claim instanceof ClaimResult.Replay r) {
                listener.onOutcome("replayed");
                return new GuardResult.Completed(r.response(), r.taskId(), r.outboxEventId(), true);
            }
            if (claim instanceof ClaimResult.Failed f) {
                listener.onOutcome("replayed");
                return new GuardResult.Completed(f.response(), null, null, true);
            }
            if (claim instanceof ClaimResult.Conflict) {
                listener.onOutcome("conflict");
                return new GuardResult.Conflict();
            }
            ClaimResult.InProgress inProgress = (ClaimResult.InProgress) claim;
            long left = deadline - System.nanoTime();
            if (policy.inProgress() != InProgressBehaviour.WAIT || left <= 0) {
                listener.onOutcome("in_progress");
                return new GuardResult.InProgress(inProgress.retryAfter());
            }
            LockSupport.parkNanos(Math.min(left, pause.toNanos()));
            pause = min(pause.multipliedBy(2), GuardDefaults.WAIT_POLL_MAX);
        }
    }

    private GuardResult execute(ClaimToken token, IdempotencyPolicy policy, MutationHandler handler) {
        Context context = context(token);
        Phase2 outcome;
        try {
            outcome = work.execute(tx -> {
                StoredResponse response = invoke(handler, context, tx);
                if (response.statusCode() >= 400) {
                    tx.setRollbackOnly();
                    return new Phase2(response, false);
                }
                store.markSucceededAtCommit(token, response, context.taskId, context.events);
                return new Phase2(response, true);
            });
        } catch (RuntimeException e) {
            return afterFailure(token, policy, e);
        }
        if (!outcome.committed()) {
            return fail(token, policy, outcome.response());
        }
        return succeeded(context, outcome.response());
    }

    /** The context of a claimed run's handler. */
    Context context(ClaimToken token) {
        return new Context(token, tracing, json);
    }

    /** The answer when the work of {@code context}'s run committed with {@code response}. */
    static GuardResult succeeded(Context context, StoredResponse response) {
        return new GuardResult.Completed(response, context.taskId, context.firstEventId(), false);
    }

    /**
     * The answer when the work's transaction failed with {@code e}: a {@link HandlerFailure} (the handler threw), a
     * response too large to store, a stale claim, a write refused for the request's content, or a failed commit. The
     * record is marked failed or released as each case requires.
     */
    GuardResult afterFailure(ClaimToken token, IdempotencyPolicy policy, RuntimeException e) {
        if (e instanceof HandlerFailure failure) {
            StoredResponse refused = RequestContentFailures.response(failure.getCause());
            if (refused != null) {
                return refused(token, refused, failure.getCause());
            }
            // a transient infrastructure failure is not the request's outcome: answer 503 and free the key
            StoredResponse response = TransientFailures.isTransient(failure.getCause()) ? UNAVAILABLE
                    : failures.toResponse(failure.getCause());
            if (response.statusCode() >= 500 && response != UNAVAILABLE) {
                rateLimited.warn("Guarded handler for {} failed; recording the failure", failure.getCause(), token.scope());
            } else {
                log.debug("Guarded handler for {} answered {}", token.scope(), response.statusCode(), failure.getCause());
            }
            return fail(token, policy, response);
        }
        if (e instanceof ResponseTooLargeException) {
            rateLimited.warn("Response for {} is too large to store; recording a failure", e, token.scope());
            return fail(token, policy, Problems.response(500, "Internal Server Error", e.getMessage(),
                    "IDEMPOTENCY_RESPONSE_TOO_LARGE"));
        }
        if (StaleClaimException.isCause(e)) {
            // Our lease lapsed and a retry took the key over (found at the completion or by the commit it was
            // sent with): our work rolled back and theirs stands.
            listener.onOutcome("in_progress");
            return new GuardResult.InProgress(policy.claimPolicy().lease());
        }
        StoredResponse refused = RequestContentFailures.response(e);
        if (refused != null) {
            return refused(token, refused, e); // a deferred write (an outbox row, a deferred constraint) refused it
        }
        // The commit itself failed (database, connection): nothing took effect, so free the key for a retry.
        releaseQuietly(token);
        if (TransientFailures.isTransient(e)) {
            rateLimited.warn("Commit for {} failed transiently; answering 503", e, token.scope());
            return new GuardResult.Completed(UNAVAILABLE, null, null, false);
        }
        throw e;
    }

    /**
     * The request's content made the database refuse the work ({@link RequestContentFailures}): nothing took effect,
     * so the answer is the client's error, and it is not stored. The key is released, as after a transient failure.
     */
    private GuardResult refused(ClaimToken token, StoredResponse response, Throwable cause) {
        log.debug("Guarded work for {} refused by the database for its content; answering {} without storing it",
                token.scope(), response.statusCode(), cause);
        releaseQuietly(token);
        listener.onOutcome("refused");
        return new GuardResult.Completed(response, null, null, false);
    }

    GuardResult fail(ClaimToken token, IdempotencyPolicy policy, StoredResponse response) {
        if (policy.isTransient(response.statusCode()) || response == UNAVAILABLE) {
            releaseQuietly(token); // if even that fails, the key is reclaimable when its lease lapses
            return new GuardResult.Completed(response, null, null, false);
        }
        listener.onOutcome("failed");
        StoredResponse stored = response;
        try {
            outside.executeWithoutResult(s -> store.markFailed(token, response));
        } catch (ResponseTooLargeException e) {
            // the error response itself is over the limit: store (and answer) the small problem that says so
            stored = Problems.response(500, "Internal Server Error", e.getMessage(), "IDEMPOTENCY_RESPONSE_TOO_LARGE");
            StoredResponse problem = stored;
            outside.executeWithoutResult(s -> store.markFailed(token, problem));
        } catch (RuntimeException e) {
            releaseQuietly(token);
            throw e;
        }
        return new GuardResult.Completed(stored, null, null, false);
    }

    /** 503 with Retry-After, never stored: the answer while the database cannot be reached. */
    private static final StoredResponse UNAVAILABLE = Problems.response(503, "Service Unavailable",
            "The database could not be reached; nothing was done. Retry with the same Idempotency-Key.",
            "TEMPORARILY_UNAVAILABLE").withHeader("Retry-After", "1");

    private void releaseQuietly(ClaimToken token) {
        try {
            outside.executeWithoutResult(s -> store.release(token));
        } catch (RuntimeException e) {
            rateLimited.warn("Could not release {}; it becomes reclaimable when its lease lapses", e, token);
        }
    }

    /**
     * Runs the handler and, when it succeeded, flushes its ORM writes (JPA, when the transaction manager has a
     * session): they reach the database before the completion statement, so a failing business write is the
     * handler's failure, and the record's row is locked only by the last statement of the transaction; a concurrent
     * duplicate meanwhile gets "in progress" instead of waiting on that lock.
     */
    private static StoredResponse invoke(MutationHandler handler, MutationContext context,
                                         org.springframework.transaction.TransactionStatus tx) {
        CurrentOutbox.Target previous = CurrentOutbox.bind(new CurrentOutbox.Target(context.scope().tenantId(),
                context.scope().userId(), context::append)); // domain events published by the handler bind like append
        try {
            StoredResponse response = handler.handle(context);
            if (response == null) {
                throw new IllegalStateException("A MutationHandler must return a response to store");
            }
            if (response.statusCode() < 400) {
                tx.flush();
            }
            return response;
        } catch (Exception e) {
            throw new HandlerFailure(e);
        } finally {
            CurrentOutbox.restore(previous);
        }
    }

    private static String outcome(GuardResult result) {
        if (result instanceof GuardResult.Completed c) {
            return c.replayed() ? "replayed" : c.response().statusCode() >= 400 ? "failed" : "claimed";
        }
        return result instanceof GuardResult.InProgress ? "in_progress" : "conflict";
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    /** What phase 2 produced: a response, and whether it committed. */
    private record Phase2(StoredResponse response, boolean committed) {
    }

    /** Carries a handler's exception through the transaction template, which rolls back on it. */
    static final class HandlerFailure extends RuntimeException {
        HandlerFailure(Exception cause) {
            super(cause);
        }
    }

    /**
     * The handler's view of its guarded call. Appended events are kept until the handler returns and then written
     * with the record's completion (in the same transaction and round trip), with ids assigned now.
     */
    static final class Context implements MutationContext {

        private final ClaimToken token;
        private final OutboxTracing tracing;
        final java.util.List<dev.once.outbox.OutboxEvent> events = new java.util.ArrayList<>(1);
        String taskId;
        private final tools.jackson.databind.json.JsonMapper json;

        Context(ClaimToken token, OutboxTracing tracing, tools.jackson.databind.json.JsonMapper json) {
            this.token = token;
            this.tracing = tracing;
            this.json = json;
        }

        @Override
        public dev.once.outbox.OutboxEvent.Builder event(String aggregateType, String aggregateId, String eventType,
                                                         int version) {
            dev.once.outbox.OutboxEvent.Builder builder = json == null ? dev.once.outbox.OutboxEvent.builder()
                    : dev.once.outbox.OutboxEvent.builder(json);
            return builder.tenantId(scope().tenantId()).actorId(scope().userId())
                    .aggregate(aggregateType, aggregateId).type(eventType, version);
        }

        @Override
        public dev.once.idempotency.IdempotencyScope scope() {
            return token.scope();
        }

        @Override
        public ClaimToken token() {
            return token;
        }

        @Override
        public java.util.UUID append(dev.once.outbox.OutboxEvent event) {
            java.util.UUID id = event.id() != null ? event.id() : dev.once.outbox.UuidV7.next();
            events.add(tracing.capture(event.withId(id)));
            return id;
        }

        @Override
        public void bindTask(String id) {
            this.taskId = id;
        }

        java.util.UUID firstEventId() {
            return events.isEmpty() ? null : events.get(0).id();
        }
    }
}
