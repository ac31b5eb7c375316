package dev.once.dispatch;

import dev.once.idempotency.ClaimResult;

/** What an existing claim means for a delivery: handled before (skip), another payload (poison), held (retry). */
final class Settled {

    private Settled() {
    }

    /**
     * Returns normally when the delivery is to be skipped: the handler succeeded before (a replay), or failed and was
     * dead-lettered (re-run only when an operator retries it).
     *
     * @throws PoisonEventException when the event id came with another payload, tenant or actor
     * @throws HandlerFailedException when another consumer holds the claim: the record is retried
     */
    static void of(Delivery.Claim claim, ClaimResult result) {
        if (result instanceof ClaimResult.Conflict) {
            throw new PoisonEventException("Event id reused with another payload, tenant or actor for "
                    + claim.handlerKey() + " (IDEMPOTENCY_KEY_CONFLICT)");
        }
        if (result instanceof ClaimResult.InProgress p) {
            throw new HandlerFailedException(claim.handlerKey(),
                    new IllegalStateException("another consumer holds this event for " + p.retryAfter()));
        }
    }
}
