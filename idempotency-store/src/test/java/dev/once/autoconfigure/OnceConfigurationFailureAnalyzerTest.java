package dev.once.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.OnceConfigurationException;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.diagnostics.FailureAnalysis;

class OnceConfigurationFailureAnalyzerTest {

    @Test
    void a_configuration_error_deep_in_bean_creation_is_reported_as_what_is_wrong_and_how_to_fix_it() {
        OnceConfigurationException cause = new OnceConfigurationException("PostgreSQL runs with wal_level=replica",
                "Set wal_level = logical and restart PostgreSQL, or set once.outbox.relay.mode=polling");
        Throwable failure = new BeanCreationException("onceCdcRelay", "Error creating bean", cause);

        FailureAnalysis analysis = new OnceConfigurationFailureAnalyzer().analyze(failure);

        assertThat(analysis.getDescription()).isEqualTo("PostgreSQL runs with wal_level=replica.");
        assertThat(analysis.getAction()).isEqualTo(
                "Set wal_level = logical and restart PostgreSQL, or set once.outbox.relay.mode=polling");
    }
}
