package dev.once.idempotency;

import java.time.Duration;
import java.util.Objects;

/**
 * How a claim behaves: the lease a claimant holds, the TTL after which the key may be reused, and whether a
 * {@code failed} record may be claimed again. Immutable; build with {@link #custom()} or take {@link #ofDefaults()}.
 */
public final class ClaimPolicy {

    private static final ClaimPolicy DEFAULTS = custom().build();

    private final Duration lease;
    private final Duration ttl;
    private final boolean retryFailed;

    private ClaimPolicy(Builder builder) {
        this.lease = builder.lease;
        this.ttl = builder.ttl;
        this.retryFailed = builder.retryFailed;
    }

    /** Lease {@link IdempotencyDefaults#LEASE}, TTL {@link IdempotencyDefaults#TTL}, failures not retried. */
    public static ClaimPolicy ofDefaults() {
        return DEFAULTS;
    }

    public static Builder custom() {
        return new Builder();
    }

    /** A builder that starts from this policy's values. */
    public Builder toBuilder() {
        return new Builder().lease(lease).ttl(ttl).retryFailed(retryFailed);
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

    @Override
    public boolean equals(Object o) {
        return o instanceof ClaimPolicy p && lease.equals(p.lease) && ttl.equals(p.ttl) && retryFailed == p.retryFailed;
    }

    @Override
    public int hashCode() {
        return Objects.hash(lease, ttl, retryFailed);
    }

    @Override
    public String toString() {
        return "ClaimPolicy[lease=" + lease + ", ttl=" + ttl + ", retryFailed=" + retryFailed + "]";
    }

    /** Builds a {@link ClaimPolicy}; {@link #build()} validates. */
    public static final class Builder {

        private Duration lease = IdempotencyDefaults.LEASE;
        private Duration ttl = IdempotencyDefaults.TTL;
        private boolean retryFailed;

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
