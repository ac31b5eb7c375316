package dev.once.idempotency;

/**
 * What a batched sweep ({@code expire} or {@code purge}) did: rows changed and the number of short transactions used.
 */
public record SweepResult(long rows, int batches) {
}
