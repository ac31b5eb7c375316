package dev.once.dispatch.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.dispatch.KafkaEventDispatcher;
import dev.once.dispatch.RetryPolicy;
import dev.once.idempotency.IdempotencyDefaults;
import org.junit.jupiter.api.Test;

class OnceDispatcherPropertiesTest {

    @Test
    void property_defaults_are_the_library_constants() {
        OnceDispatcherProperties properties = new OnceDispatcherProperties();

        assertThat(properties.toRetryPolicy()).isEqualTo(new RetryPolicy(RetryPolicy.MAX_ATTEMPTS,
                RetryPolicy.INITIAL_INTERVAL, RetryPolicy.MULTIPLIER, RetryPolicy.MAX_INTERVAL));
        assertThat(properties.getConcurrency()).isEqualTo(KafkaEventDispatcher.CONCURRENCY);
        assertThat(properties.getLease()).isEqualTo(IdempotencyDefaults.LEASE);
        assertThat(properties.getGroupId()).as("derived from the service unless set").isEmpty();
        assertThat(properties.getTopics()).isEmpty();
    }
}
