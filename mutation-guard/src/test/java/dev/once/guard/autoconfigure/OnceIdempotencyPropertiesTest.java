package dev.once.guard.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.guard.IdempotencyPolicy;
import dev.once.idempotency.IdempotencyStoreOptions;
import org.junit.jupiter.api.Test;

class OnceIdempotencyPropertiesTest {

    @Test
    void property_defaults_are_the_library_constants() {
        OnceIdempotencyProperties properties = new OnceIdempotencyProperties();

        assertThat(properties.toPolicy()).isEqualTo(IdempotencyPolicy.ofDefaults());
        assertThat(properties.toStoreOptions()).isEqualTo(IdempotencyStoreOptions.ofDefaults());
        assertThat(properties.isPipelinedCommit()).isEqualTo(dev.once.idempotency.IdempotencyDefaults.PIPELINED_COMMIT);
    }
}
