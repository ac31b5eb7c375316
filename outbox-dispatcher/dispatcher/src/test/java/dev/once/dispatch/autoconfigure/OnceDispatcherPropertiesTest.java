package dev.once.dispatch.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.dispatch.KafkaEventDispatcher;
import dev.once.dispatch.ParkingPolicy;
import dev.once.dispatch.UnhandledPolicy;
import dev.once.dispatch.UnhandledPolicy.Action;
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
        assertThat(properties.getParking().isEnabled()).isTrue();
        assertThat(properties.getParking().toPolicy()).isEqualTo(ParkingPolicy.ofDefaults());
        assertThat(properties.getUnhandled().getForeignType()).isEqualTo(UnhandledPolicy.FOREIGN_TYPE);
        assertThat(properties.getUnhandled().getUnknownVersion()).isEqualTo(UnhandledPolicy.UNKNOWN_VERSION);
        assertThat(properties.getClaimPartitions().isEnabled()).isTrue();
        assertThat(properties.toPartitionOptions()).isEqualTo(dev.once.idempotency.ClaimPartitions.Options.ofDefaults());
    }

    @Test
    void a_type_choice_beats_a_topic_choice_which_beats_the_default() {
        OnceDispatcherProperties properties = new OnceDispatcherProperties();
        OnceDispatcherProperties.Unhandled.Topic shared = new OnceDispatcherProperties.Unhandled.Topic();
        shared.setForeignType(Action.DEAD_LETTER);
        properties.getUnhandled().getTopics().put("once.shared", shared);
        properties.getUnhandled().getTypes().put("AuditTrail", Action.SKIP);

        UnhandledPolicy policy = properties.getUnhandled().toPolicy();

        assertThat(policy.decide("once.account", "InvoiceSent", false)).isEqualTo(Action.SKIP);
        assertThat(policy.decide("once.shared", "InvoiceSent", false)).isEqualTo(Action.DEAD_LETTER);
        assertThat(policy.decide("once.shared", "AuditTrail", false)).isEqualTo(Action.SKIP);
        assertThat(policy.decide("once.shared", "OrderPlaced", true)).isEqualTo(Action.HOLD);
        assertThat(Action.parse("dead-letter")).isEqualTo(Action.DEAD_LETTER);
    }
}
