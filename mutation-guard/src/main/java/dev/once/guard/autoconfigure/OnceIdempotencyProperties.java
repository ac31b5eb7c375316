package dev.once.guard.autoconfigure;

import dev.once.guard.GuardDefaults;
import dev.once.guard.IdempotencyPolicy;
import dev.once.idempotency.IdempotencyDefaults;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code once.idempotency.*}: defaults for every {@code @Idempotent} route. Each default is the library's own
 * constant ({@link IdempotencyDefaults}, {@link GuardDefaults}); a route's annotation overrides them. The database
 * side shares the prefix ({@code OnceStoreProperties}: enabled, migrate, pipelined-commit, stored responses).
 */
@ConfigurationProperties("once.idempotency")
public class OnceIdempotencyProperties {

    /** How long a claim is held before a retry of the same request may reclaim it. */
    private Duration lease = IdempotencyDefaults.LEASE;

    /** How long a key is remembered and replayed. */
    private Duration ttl = IdempotencyDefaults.TTL;

    /** For routes that wait on an in-progress key: the longest wait before answering 409. */
    private Duration waitMax = GuardDefaults.WAIT_MAX;

    /** Response statuses that are not stored; the key is released so a retry runs again. */
    private Set<Integer> transientStatuses = new TreeSet<>(GuardDefaults.TRANSIENT_STATUSES);

    /** Largest request body read to fingerprint a guarded request, in bytes; larger requests get 413. */
    private int maxRequestBodyBytes = GuardDefaults.MAX_REQUEST_BODY_BYTES;

    /** Response headers stored and replayed besides Content-Type. */
    private Set<String> replayedHeaders = new LinkedHashSet<>(GuardDefaults.REPLAYED_HEADERS);

    /** With Spring Security: an authority with this prefix names the user's tenant (TENANT_acme is tenant acme). */
    private String tenantAuthorityPrefix = GuardDefaults.TENANT_AUTHORITY_PREFIX;

    /** The tenant of users without a tenant authority. */
    private String defaultTenant = GuardDefaults.DEFAULT_TENANT;

    /** The defaults every route starts from. */
    private final Reactive reactive = new Reactive();

    public Reactive getReactive() {
        return reactive;
    }

    /** WebFlux routes. */
    public static class Reactive {

        /**
         * Which transaction the work of an @Idempotent WebFlux route runs in: jdbc (the guard's JDBC transaction, on
         * a bounded scheduler, as on Spring MVC) or r2dbc (an R2DBC transaction with the outbox rows and the stored
         * response, which needs a ConnectionFactory and a ReactiveTransactionManager).
         */
        private dev.once.guard.ReactiveMutationGuard.Transactions transactions = GuardDefaults.REACTIVE_TRANSACTIONS;

        /**
         * Threads that run WebFlux routes' JDBC work, from one shared queue (a blocked run never holds up the runs
         * queued after it). Match it to the connection pool.
         */
        private int jdbcThreads = GuardDefaults.REACTIVE_JDBC_THREADS;

        public int getJdbcThreads() {
            return jdbcThreads;
        }

        public void setJdbcThreads(int jdbcThreads) {
            this.jdbcThreads = jdbcThreads;
        }

        public dev.once.guard.ReactiveMutationGuard.Transactions getTransactions() {
            return transactions;
        }

        public void setTransactions(dev.once.guard.ReactiveMutationGuard.Transactions transactions) {
            this.transactions = transactions;
        }
    }

    public IdempotencyPolicy toPolicy() {
        return IdempotencyPolicy.custom().lease(lease).ttl(ttl).inProgress(GuardDefaults.IN_PROGRESS, waitMax)
                .transientStatuses(transientStatuses).build();
    }

    public Duration getLease() {
        return lease;
    }

    public void setLease(Duration lease) {
        this.lease = lease;
    }

    public Duration getTtl() {
        return ttl;
    }

    public void setTtl(Duration ttl) {
        this.ttl = ttl;
    }

    public Duration getWaitMax() {
        return waitMax;
    }

    public void setWaitMax(Duration waitMax) {
        this.waitMax = waitMax;
    }

    public Set<Integer> getTransientStatuses() {
        return transientStatuses;
    }

    public void setTransientStatuses(Set<Integer> transientStatuses) {
        this.transientStatuses = transientStatuses;
    }

    public int getMaxRequestBodyBytes() {
        return maxRequestBodyBytes;
    }

    public void setMaxRequestBodyBytes(int maxRequestBodyBytes) {
        this.maxRequestBodyBytes = maxRequestBodyBytes;
    }

    public Set<String> getReplayedHeaders() {
        return replayedHeaders;
    }

    public void setReplayedHeaders(Set<String> replayedHeaders) {
        this.replayedHeaders = replayedHeaders;
    }

    public String getTenantAuthorityPrefix() {
        return tenantAuthorityPrefix;
    }

    public void setTenantAuthorityPrefix(String tenantAuthorityPrefix) {
        this.tenantAuthorityPrefix = tenantAuthorityPrefix;
    }

    public String getDefaultTenant() {
        return defaultTenant;
    }

    public void setDefaultTenant(String defaultTenant) {
        this.defaultTenant = defaultTenant;
    }
}
