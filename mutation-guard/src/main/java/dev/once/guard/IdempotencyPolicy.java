package dev.once.guard;

import dev.once.idempotency.ClaimPolicy;
import java.time.Duration;
import java.util.Set;

/**
 * A route's idempotency policy: whether the key is required, what a request finds while the key is in progress,
 * the claim policy (lease, TTL, whether failures may be retried), and which response statuses are transient.
 * Immutable; build with {@link #custom()} or take {@link #ofDefaults()}, whose values are {@link GuardDefaults} and
 * {@link dev.once.idempotency.IdempotencyDefaults}.
 */
public record IdempotencyPolicy(boolean keyRequired, InProgressBehaviour inProgress, Duration waitMax,
                                ClaimPolicy claimPolicy, Set<Integer> transientStatuses) {

    private static final IdempotencyPolicy DEFAULTS = custom().build();

    public IdempotencyPolicy {
        if (inProgress == null || claimPolicy == null) {
            throw new IllegalArgumentException("inProgress and claimPolicy are required");
        }
        if (waitMax == null || waitMax.isNegative()) {
            throw new IllegalArgumentException("waitMax must be zero or positive, was " + waitMax);
        }
        transientStatuses = transientStatuses == null ? Set.of() : Set.copyOf(transientStatuses);
    }

    public static IdempotencyPolicy ofDefaults() {
        return DEFAULTS;
    }

    public static Builder custom() {
        return new Builder();
    }

    public boolean isTransient(int status) {
        return transientStatuses.contains(status);
    }

    /** Builds an {@link IdempotencyPolicy}. */
    public static final class Builder {

        private boolean keyRequired = true;
        private InProgressBehaviour inProgress = GuardDefaults.IN_PROGRESS;
        private Duration waitMax = GuardDefaults.WAIT_MAX;
        private ClaimPolicy.Builder claim = ClaimPolicy.custom();
        private Set<Integer> transientStatuses = GuardDefaults.TRANSIENT_STATUSES;

        private Builder() {
        }

        public Builder keyRequired(boolean required) {
            this.keyRequired = required;
            return this;
        }

        /** Reject at once (409) while the key is in progress. */
        public Builder rejectInProgress() {
            this.inProgress = InProgressBehaviour.REJECT;
            return this;
        }

        /** Wait up to {@code max} for the first request to finish, then replay it. */
        public Builder waitInProgress(Duration max) {
            this.inProgress = InProgressBehaviour.WAIT;
            this.waitMax = max;
            return this;
        }

        public Builder inProgress(InProgressBehaviour behaviour, Duration max) {
            this.inProgress = behaviour;
            this.waitMax = max;
            return this;
        }

        public Builder lease(Duration lease) {
            claim.lease(lease);
            return this;
        }

        public Builder ttl(Duration ttl) {
            claim.ttl(ttl);
            return this;
        }

        public Builder retryFailed(boolean retry) {
            claim.retryFailed(retry);
            return this;
        }

        /** See {@link ClaimPolicy.Builder#durable}: for work that names things outside the database after the claim. */
        public Builder durableClaim(boolean durable) {
            claim.durable(durable);
            return this;
        }

        public Builder transientStatuses(Set<Integer> statuses) {
            this.transientStatuses = statuses;
            return this;
        }

        public IdempotencyPolicy build() {
            return new IdempotencyPolicy(keyRequired, inProgress, waitMax, claim.build(), transientStatuses);
        }
    }
}
