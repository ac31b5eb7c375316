package dev.once.autoconfigure;

import dev.once.idempotency.IdempotencyDefaults;
import dev.once.idempotency.IdempotencyStoreOptions;
import dev.once.idempotency.OversizedResponse;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code once.idempotency.*}, the database side: whether Once's tables are migrated, the {@code OnceDataSource}
 * wrapping, and how responses are stored. The guard's route defaults share the prefix
 * ({@code OnceIdempotencyProperties} in {@code once-mutation-guard}). Defaults are {@link IdempotencyDefaults}.
 */
@ConfigurationProperties("once.idempotency")
public class OnceStoreProperties {

    /** Whether the idempotency side (store, operations, guard) is created; the outbox has once.outbox.enabled. */
    private boolean enabled = true;

    /**
     * Whether Once's Flyway migrations (idempotency_record, outbox_event, relay state) run at startup, with their own
     * location and history table (once_schema_history), beside the application's own Flyway. Set it false when the
     * migrations are applied some other way (OnceMigrations.migrate, or Flyway in a deployment step).
     */
    private boolean migrate = IdempotencyDefaults.MIGRATE;

    /**
     * Whether the application's DataSource beans are wrapped in {@code OnceDataSource}, so that outbox rows and the
     * guard's completion travel with the transaction's COMMIT in one round trip instead of one each.
     */
    private boolean pipelinedCommit = IdempotencyDefaults.PIPELINED_COMMIT;

    /** Largest response body stored for replay, in bytes. */
    private int maxResponseBodyBytes = IdempotencyDefaults.MAX_RESPONSE_BODY_BYTES;

    /** What happens to a response body over the limit: REJECT (roll back, store a 500) or OMIT_BODY. */
    private OversizedResponse oversizedResponse = IdempotencyDefaults.OVERSIZED_RESPONSE;

    public IdempotencyStoreOptions toStoreOptions() {
        return new IdempotencyStoreOptions(maxResponseBodyBytes, oversizedResponse);
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public boolean isMigrate() {
        return migrate;
    }

    public void setMigrate(boolean migrate) {
        this.migrate = migrate;
    }

    public boolean isPipelinedCommit() {
        return pipelinedCommit;
    }

    public void setPipelinedCommit(boolean pipelinedCommit) {
        this.pipelinedCommit = pipelinedCommit;
    }

    public int getMaxResponseBodyBytes() {
        return maxResponseBodyBytes;
    }

    public void setMaxResponseBodyBytes(int maxResponseBodyBytes) {
        this.maxResponseBodyBytes = maxResponseBodyBytes;
    }

    public OversizedResponse getOversizedResponse() {
        return oversizedResponse;
    }

    public void setOversizedResponse(OversizedResponse oversizedResponse) {
        this.oversizedResponse = oversizedResponse;
    }
}
