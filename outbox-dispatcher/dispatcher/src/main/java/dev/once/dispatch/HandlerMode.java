package dev.once.dispatch;

/** How a handler's claim relates to its effects. */
public enum HandlerMode {

    /**
     * The default, for effects that are database writes: claim, handler writes and completion commit in one
     * transaction. A redelivery finds the claim succeeded and is skipped; a crash before commit leaves nothing behind.
     * Exactly once.
     */
    TRANSACTIONAL,

    /**
     * For external effects (an e-mail, a call to another service): the claim commits first with a lease, the handler
     * runs, then the claim completes. A crash after the effect but before completion re-runs the handler once the lease
     * lapses: at least once, with the same {@link HandledEvent#derivedKey()} each time, so the other side can
     * deduplicate.
     */
    LEASED
}
