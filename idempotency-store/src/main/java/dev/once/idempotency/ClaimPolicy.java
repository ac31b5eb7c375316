package dev.once.idempotency;

import java.time.Duration;
import java.util.Objects;

/**
 * How a claim behaves: the lease a claimant holds, the TTL after which the key may be reused, whether a
 * {@code failed} record may be claimed again, and whether a claim made outside a transaction must be durable before
 * the work starts. Immutable; build with {@link #custom()} or take {@link #ofDefaults()}.
 */
public final class ClaimPolicy {

    private static final ClaimPolicy DEFAULTS = custom().build();

    private final Duration lease;
    private final Duration ttl;
    private final boolean retryFailed;
    private final boolean durable;

    private ClaimPolicy(Builder builder) {
        this.lease = builder.lease;
        this.ttl = builder.ttl;
        this.retryFailed = builder.retryFailed;
        this.durable = builder.durable;
    }

    /**
     * Lease {@link IdempotencyDefaults#LEASE}, TTL {@link IdempotencyDefaults#TTL}, failures not retried, claims
     * outside a transaction committed asynchronously.
     */
    public static ClaimPolicy ofDefaults() {
        return DEFAULTS;
    }

    public static Builder custom() {
        return new Builder();
    }

    /** A builder that starts from this policy's values. */
    public Builder toBuilder() {
        return new Builder().lease(lease).ttl(ttl).retryFailed(retryFailed).durable(durable);
    }

    public Duration lease() {
        return lease;
    }

    public Duration ttl() {
        return ttl;
    }

    public boolean retryFailed() {
        return retryFailed;
    }

    /** Whether a claim made outside a transaction is committed synchronously; see {@link Builder#durable}. */
    public boolean durable() {
        return durable;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ClaimPolicy p && lease.equals(p.lease) && ttl.equals(p.ttl) && retryFailed == p.retryFailed
                && durable == p.durable;
    }

    @Override
    public int hashCode() {
        return Objects.hash(lease, ttl, retryFailed, durable);
    }

    @Override
    public String toString() {
        return "ClaimPolicy[lease=" + lease + ", ttl=" + ttl + ", retryFailed=" + retryFailed + ", durable=" + durable + "]";
    }

    /** Builds a {@link ClaimPolicy}; {@link #build()} validates. */
    public static final class Builder {

        private Duration lease = IdempotencyDefaults.LEASE;
        private Duration ttl = IdempotencyDefaults.TTL;
        private boolean retryFailed;
        private boolean durable;

        private Builder() {
        }

        public Builder lease(Duration lease) {
            this.lease = lease;
            return this;
        }

        public Builder ttl(Duration ttl) {
            this.ttl = ttl;
            return this;
        }

        public Builder retryFailed(boolean retryFailed) {
            this.retryFailed = retryFailed;
            return this;
        }

        /**
         * Commit a claim made outside a transaction synchronously, so that it is on disk before the work starts.
         * By default such a claim commits asynchronously: a database crash can forget it, and the retry then claims
         * the key afresh under a new record id. That is harmless for work that keeps its effects in the database,
         * because they are committed with the completion or not at all. Ask for a durable claim when the work
         * leaves something outside the database named after the claim (such as a file under a name derived from
         * {@link ClaimToken#recordId()}), so that its re-execution finds the same name.
         */
        public Builder durable(boolean durable) {
            this.durable = durable;
            return this;
        }

        public ClaimPolicy build() {
            if (lease == null || lease.toMillis() < 1) {
                throw new IllegalArgumentException("lease must be at least 1 ms, was " + lease);
            }
            if (ttl == null || ttl.compareTo(lease) <= 0) {
                throw new IllegalArgumentException("ttl (" + ttl + ") must be longer than lease (" + lease + ")");
            }
            return new ClaimPolicy(this);
        }
    }
}
