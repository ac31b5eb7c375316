/**
 * What Once's modules share with each other, and nothing else does: deferring statements to a transaction's commit
 * ({@link dev.once.spi.CommitStatements}), the guarded call an outbox append joins
 * ({@link dev.once.spi.CurrentOutbox}), telling transient failures from real ones
 * ({@link dev.once.spi.TransientFailures}), Once's SQL over R2DBC ({@link dev.once.spi.R2dbcStatements}), and the
 * parts of every long-running loop ({@link dev.once.spi.Waiter}, {@link dev.once.spi.Backoff},
 * {@link dev.once.spi.Rounds}, {@link dev.once.spi.RateLimitedLog}, {@link dev.once.spi.RunningLifecycle}).
 *
 * <p>This is the one package Once's modules import from each other besides their public APIs and autoconfigurations
 * (docs/API.md). Applications do not need it. It is public because Java has no other way to share between jars, and
 * it is checked for binary compatibility like every public package, so that modules of two patch versions side by
 * side still link.
 */
package dev.once.spi;
