package dev.once.guard;

/** What a request does when the same key is still being processed by another request. */
public enum InProgressBehaviour {

    /** Answer at once: 409 IDEMPOTENCY_IN_PROGRESS with a Retry-After hint. */
    REJECT,

    /**
     * Short-poll until the first request finishes, then replay its response; answer 409 when the policy's
     * {@code waitMax} runs out first. Holds the calling thread while it waits.
     */
    WAIT
}
