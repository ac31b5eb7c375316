package dev.once.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.OnceConfigurationException;
import dev.once.test.TestDatabase;
import java.io.InputStream;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** A setting under the name an earlier version read stops startup with its replacement, never silently ignored. */
class RenamedPropertiesIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(2);

    private ApplicationContextRunner runner() {
        DataSource shared = new DelegatingDataSource(db.dataSource());
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(OnceStoreAutoConfiguration.class))
                .withBean(DataSource.class, () -> shared);
    }

    @Test
    void the_old_slot_name_stops_startup_naming_its_replacement() {
        runner().withPropertyValues("once.outbox.relay.slot-name=orders_outbox", "once.dispatcher.bootstrap-servers=k:9092")
                .run(context -> assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                        .isInstanceOf(OnceConfigurationException.class)
                        .hasMessageContaining("once.outbox.relay.slot-name, once.dispatcher.bootstrap-servers")
                        .hasMessageContaining("once.outbox.relay.slot-name → once.outbox.relay.cdc.slot-name")
                        .hasMessageContaining("once.dispatcher.bootstrap-servers → spring.kafka.bootstrap-servers"));
        runner().withPropertyValues("once.outbox.relay.cdc.slot-name=orders_outbox")
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void every_renamed_setting_is_deprecated_in_the_metadata_with_the_same_replacement() throws Exception {
        JsonNode metadata;
        try (InputStream in = getClass().getResourceAsStream("/META-INF/additional-spring-configuration-metadata.json")) {
            metadata = JsonMapper.builder().build().readTree(in);
        }
        RenamedProperties.RENAMED.forEach((old, replacement) -> {
            JsonNode entry = null;
            for (JsonNode property : metadata.get("properties")) {
                if (property.get("name").asString().equals(old)) {
                    entry = property;
                }
            }
            assertThat(entry).as(old).isNotNull();
            assertThat(entry.get("deprecation").get("replacement").asString()).isEqualTo(replacement);
            assertThat(entry.get("deprecation").get("level").asString()).isEqualTo("error");
        });
    }
}
