package dev.once.guard.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.guard.GuardDefaults;
import dev.once.guard.IdempotencyPolicy;
import org.junit.jupiter.api.Test;

class OnceIdempotencyPropertiesTest {

    @Test
    void property_defaults_are_the_library_constants() {
        OnceIdempotencyProperties properties = new OnceIdempotencyProperties();

        assertThat(properties.toPolicy()).isEqualTo(IdempotencyPolicy.ofDefaults());
        assertThat(properties.getMaxRequestBodyBytes()).isEqualTo(GuardDefaults.MAX_REQUEST_BODY_BYTES);
        assertThat(properties.getReplayedHeaders()).containsExactlyElementsOf(GuardDefaults.REPLAYED_HEADERS);
        assertThat(properties.getTenantAuthorityPrefix()).isEqualTo(GuardDefaults.TENANT_AUTHORITY_PREFIX);
        assertThat(properties.getDefaultTenant()).isEqualTo(GuardDefaults.DEFAULT_TENANT);
        assertThat(properties.getReactive().getTransactions()).isEqualTo(GuardDefaults.REACTIVE_TRANSACTIONS);
        assertThat(properties.getReactive().getJdbcThreads()).isEqualTo(GuardDefaults.REACTIVE_JDBC_THREADS);
    }
}
