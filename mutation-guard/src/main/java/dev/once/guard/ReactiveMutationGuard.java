package dev.once.guard;

import dev.once.idempotency.ClaimToken;
import dev.once.idempotency.R2dbcCompletion;
import dev.once.idempotency.StoredResponse;
import dev.once.spi.R2dbcStatements;
import dev.once.spi.TransientFailures;
import java.sql.SQLException;
import java.util.List;
import org.springframework.transaction.ReactiveTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.reactive.TransactionalOperator;
import org.springframework.transaction.support.DefaultTransactionDefinition;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The {@link IdempotencyMutationGuard} for reactive stacks (WebFlux): the same claims, replays, answers and failure
 * handling, with the handler's work in one of two transactions.
 * <ul>
 *   <li>{@link Transactions#JDBC}: the whole guarded run, the handler's {@code Mono} included, runs on a bounded
 *       scheduler ({@link #jdbcScheduler}) in the guard's JDBC transaction, exactly as on Spring
 *       MVC. The handler's JDBC writes (JdbcTemplate, JPA) join it when they run on the subscribing thread; its
 *       outbox rows and the stored response commit with them. Work the handler moves to another thread
 *       ({@code publishOn}, another client's callbacks) is outside the transaction.</li>
 *   <li>{@link Transactions#R2DBC}: the key is claimed, and a failure recorded, by the JDBC store on the scheduler;
 *       the handler's {@code Mono} runs in an R2DBC transaction of its own (Spring's {@code R2dbcTransactionManager}),
 *       and its outbox rows and the stored response are written by {@link R2dbcCompletion} in that transaction. The
 *       handler's R2DBC writes, its events and the response commit together or not at all.</li>
 * </ul>
 * A duplicate, a conflict or a request that finds the key in progress never subscribes to the handler. Thread-safe.
 */
public final class ReactiveMutationGuard {

    /** Which transaction a handler's work runs in. */
    public enum Transactions {
        /** The guard's JDBC transaction, on the bounded scheduler. */
        JDBC,
        /** An R2DBC transaction, completed by {@link R2dbcCompletion}. */
        R2DBC
    }

    private final IdempotencyMutationGuard guard;
    private final Scheduler scheduler;
    private final TransactionalOperator r2dbc;
    private final R2dbcCompletion completion;

    private ReactiveMutationGuard(IdempotencyMutationGuard guard, Scheduler scheduler, TransactionalOperator r2dbc,
                                  R2dbcCompletion completion) {
        this.guard = guard;
        this.scheduler = scheduler;
        this.r2dbc = r2dbc;
        this.completion = completion;
    }

    /**
     * A scheduler for JDBC work: {@code threads} daemon threads that take runs from one shared queue, so that a run
     * that blocks (on a lock, a slow handler) holds its own thread only. Reactor's {@code boundedElastic} pins each
     * subscription to a worker, and runs queued on a blocked worker wait for it. Dispose of it when done.
     */
    public static Scheduler jdbcScheduler(int threads) {
        java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
        return reactor.core.scheduler.Schedulers.fromExecutorService(java.util.concurrent.Executors.newFixedThreadPool(
                threads, r -> {
                    Thread thread = new Thread(r, "once-guard-jdbc-" + n.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                }), "once-guard-jdbc");
    }

    /** Handlers run in {@code guard}'s JDBC transaction on {@code scheduler} ({@link #jdbcScheduler}). */
    public static ReactiveMutationGuard jdbc(IdempotencyMutationGuard guard, Scheduler scheduler) {
        return new ReactiveMutationGuard(guard, scheduler, null, null);
    }

    /**
     * Handlers run in a new transaction of {@code transactions} (an {@code R2dbcTransactionManager}) and complete
     * through {@code completion}, over the same database; claims and failures go through {@code guard}'s store on
     * {@code scheduler}.
     */
    public static ReactiveMutationGuard r2dbc(IdempotencyMutationGuard guard, Scheduler scheduler,
                                              ReactiveTransactionManager transactions, R2dbcCompletion completion) {
        DefaultTransactionDefinition definition = new DefaultTransactionDefinition(
                TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        return new ReactiveMutationGuard(guard, scheduler, TransactionalOperator.create(transactions, definition),
                completion);
    }

    public Transactions transactions() {
        return r2dbc == null ? Transactions.JDBC : Transactions.R2DBC;
    }

    /** Runs {@code handler}'s work at most once for {@code request}'s key, as {@code policy} says. */
    public Mono<GuardResult> run(MutationRequest request, IdempotencyPolicy policy, ReactiveMutationHandler handler) {
        if (r2dbc == null) {
            // the handler's Mono is subscribed on the pool's thread, in the guard's transaction, with the Reactor
            // context of the request (its security context, say), which a blocking subscription would not carry
            return Mono.deferContextual(subscriber -> Mono.fromCallable(() -> guard.run(request, policy, context -> {
                StoredResponse response = handler.handle(context).contextWrite(subscriber).block();
                if (response == null) {
                    throw new IllegalStateException("A ReactiveMutationHandler must emit a response to store");
                }
                return response;
            })).subscribeOn(scheduler));
        }
        return Mono.defer(() -> {
            long start = System.nanoTime();
            return Mono.fromCallable(() -> guard.claimOrAnswer(request, policy)).subscribeOn(scheduler)
                    .flatMap(claim -> claim instanceof ClaimToken token ? execute(token, policy, handler)
                            : Mono.just((GuardResult) claim))
                    .onErrorResume(e -> e instanceof RuntimeException r && TransientFailures.isTransient(r),
                            e -> Mono.just(guard.unavailable(request, (RuntimeException) e)))
                    .doOnNext(result -> guard.finished(result, start));
        });
    }

    private Mono<GuardResult> execute(ClaimToken token, IdempotencyPolicy policy, ReactiveMutationHandler handler) {
        IdempotencyMutationGuard.Context context = guard.context(token);
        Mono<GuardResult> work = Mono.defer(() -> handler.handle(context))
                .switchIfEmpty(Mono.error(() -> new IllegalStateException(
                        "A ReactiveMutationHandler must emit a response to store")))
                .onErrorMap(e -> e instanceof Exception, e -> new IdempotencyMutationGuard.HandlerFailure(sql(e)))
                .flatMap(response -> response.statusCode() >= 400
                        ? Mono.error(new Refused(response))
                        : completion.succeed(token, response, context.taskId, List.copyOf(context.events))
                                .thenReturn(IdempotencyMutationGuard.succeeded(context, response)));
        return r2dbc.transactional(work)
                .onErrorResume(Refused.class, refused -> blocking(() -> guard.fail(token, policy, refused.response)))
                .onErrorResume(e -> e instanceof RuntimeException, e -> blocking(
                        () -> guard.afterFailure(token, policy, (RuntimeException) sqlOrSelf(e))));
    }

    private Mono<GuardResult> blocking(java.util.concurrent.Callable<GuardResult> step) {
        return Mono.fromCallable(step).subscribeOn(scheduler);
    }

    /**
     * {@code failure} with an R2DBC exception's SQLState carried by an {@link SQLException} at the head of its cause
     * chain, so that the guard's classification (by SQLState: the request's content, a transient outage, a stale
     * claim) reads R2DBC failures as it reads JDBC ones.
     */
    private static Exception sql(Throwable failure) {
        String state = R2dbcStatements.sqlState(failure);
        return state == null ? (Exception) failure : new SQLException(failure.getMessage(), state, failure);
    }

    private static Throwable sqlOrSelf(Throwable failure) {
        if (failure instanceof IdempotencyMutationGuard.HandlerFailure) {
            return failure;
        }
        String state = R2dbcStatements.sqlState(failure);
        return state == null ? failure
                : new org.springframework.dao.DataAccessResourceFailureException(failure.getMessage(),
                        new SQLException(failure.getMessage(), state, failure));
    }

    /** A response of 400 or more: the transaction rolls back, then the failure is recorded. */
    private static final class Refused extends RuntimeException {
        final transient StoredResponse response;

        Refused(StoredResponse response) {
            super(null, null, false, false);
            this.response = response;
        }
    }
}
