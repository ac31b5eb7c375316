package dev.once.guard;

import dev.once.idempotency.StoredResponse;
import java.time.Duration;
import java.util.UUID;

/** What {@link IdempotencyMutationGuard#run} did with a request. */
public sealed interface GuardResult {

    /**
     * A response to send: produced now ({@code replayed == false}) or replayed from the first request. The response
     * may be a stored failure.
     */
    record Completed(StoredResponse response, String taskId, UUID outboxEventId, boolean replayed) implements GuardResult {
    }

    /** The same key is still being processed: 409 IDEMPOTENCY_IN_PROGRESS, retry after {@code retryAfter}. */
    record InProgress(Duration retryAfter) implements GuardResult {
    }

    /** The key was used with a different request: 422 IDEMPOTENCY_KEY_CONFLICT. */
    record Conflict() implements GuardResult {
    }
}
