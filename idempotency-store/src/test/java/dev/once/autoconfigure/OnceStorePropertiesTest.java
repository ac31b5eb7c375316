package dev.once.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.idempotency.IdempotencyDefaults;
import dev.once.idempotency.IdempotencyStoreOptions;
import dev.once.spi.SlotWatermarks;
import dev.once.retention.RetentionOptions;
import dev.once.retention.RetentionRule;
import org.junit.jupiter.api.Test;

class OnceStorePropertiesTest {

    @Test
    void property_defaults_are_the_library_constants() {
        OnceStoreProperties properties = new OnceStoreProperties();

        assertThat(properties.toStoreOptions()).isEqualTo(IdempotencyStoreOptions.ofDefaults());
        assertThat(properties.isPipelinedCommit()).isEqualTo(IdempotencyDefaults.PIPELINED_COMMIT);
        assertThat(properties.isMigrate()).isEqualTo(IdempotencyDefaults.MIGRATE);
        assertThat(properties.isEnabled()).isTrue();
    }

    @Test
    void retention_property_defaults_are_the_library_constants() {
        OnceRetentionProperties properties = new OnceRetentionProperties();

        assertThat(properties.toOptions()).isEqualTo(RetentionOptions.ofDefaults());
        assertThat(properties.getGrace()).isEqualTo(RetentionRule.GRACE);
        assertThat(properties.isEnabled()).isTrue();
    }

    @Test
    void slot_property_defaults_are_the_library_constants() {
        assertThat(new OnceSlotProperties().toOptions(RetentionRule.OUTBOX_RETENTION))
                .isEqualTo(SlotWatermarks.Options.ofDefaults());
        assertThat(new OnceExternalRelayProperties().getSlotName()).as("required in mode external").isEmpty();
    }
}
