package dev.once.relay.cdc.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.relay.cdc.CdcSettings;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

class OnceCdcRelayPropertiesTest {

    @Test
    void property_defaults_are_the_library_constants() {
        OnceCdcRelayProperties properties = new OnceCdcRelayProperties();

        assertThat(properties.getHeartbeat()).isEqualTo(CdcSettings.HEARTBEAT);
        assertThat(properties.getLeaderPoll()).isEqualTo(CdcSettings.LEADER_POLL);
        assertThat(properties.isFailFast()).isEqualTo(CdcSettings.FAIL_FAST);
        assertThat(properties.getConnection().url()).as("the application DataSource's unless set").isEmpty();
        assertThat(properties.getSlotName()).as("derived from the database unless set").isEmpty();
        assertThat(properties.getPublicationName()).as("the slot's name unless set").isEmpty();
    }

    @Test
    void derived_slot_names_differ_per_database_and_schema_and_fit_postgresql() {
        assertThat(CdcSettings.slotNameFor("orders", "public")).isEqualTo("once_orders");
        assertThat(CdcSettings.slotNameFor("Billing-DB", "public")).isEqualTo("once_billing_db");
        assertThat(CdcSettings.slotNameFor("orders", "tenant_a")).isEqualTo("once_orders_tenant_a")
                .isNotEqualTo(CdcSettings.slotNameFor("orders", "tenant_b"));
        String longName = CdcSettings.slotNameFor("d".repeat(80), "public");
        assertThat(longName).hasSize(63).matches("[a-z0-9_]+")
                .isNotEqualTo(CdcSettings.slotNameFor("d".repeat(81), "public"));
    }

    @Test
    void a_direct_connection_binds_from_properties_and_what_it_leaves_out_is_empty() {
        OnceCdcRelayProperties bound = new Binder(new MapConfigurationPropertySource(Map.of(
                "once.outbox.relay.cdc.connection.url", "jdbc:postgresql://postgres:5432/orders")))
                .bind("once.outbox.relay.cdc", OnceCdcRelayProperties.class).get();

        assertThat(bound.getConnection()).isEqualTo(new OnceCdcRelayProperties.Connection(
                "jdbc:postgresql://postgres:5432/orders", "", ""));
    }
}
