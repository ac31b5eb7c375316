package dev.once.relay.cdc.autoconfigure;

import dev.once.OnceConfigurationException;
import dev.once.autoconfigure.OnceSlotProperties;
import dev.once.spi.SlotWatermarks;
import dev.once.relay.EventTransport;
import dev.once.relay.OutboxRelay;
import dev.once.relay.RelayListener;
import dev.once.relay.autoconfigure.OnceRelayAutoConfiguration;
import dev.once.relay.autoconfigure.OnceRelayProperties;
import dev.once.relay.cdc.CdcRelay;
import dev.once.relay.cdc.CdcSettings;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.autoconfigure.JdbcConnectionDetails;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The CDC relay in a Spring Boot application: the default relay when this module is on the classpath, unless
 * {@code once.outbox.relay.mode=polling}. It reads the application's database with the application's own settings
 * ({@link ReplicationConnection}) and publishes through the relay's {@link EventTransport}
 * ({@link OnceRelayAutoConfiguration}). Its slot is named after the database unless
 * {@code once.outbox.relay.cdc.slot-name} says otherwise ({@link #slotName}).
 */
@AutoConfiguration(before = OnceRelayAutoConfiguration.class, afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "dev.once.autoconfigure.OnceStoreAutoConfiguration"})
@ConditionalOnBean(DataSource.class)
@ConditionalOnBooleanProperty(name = "once.outbox.relay.enabled", matchIfMissing = true)
@ConditionalOnProperty(name = "once.outbox.relay.mode", havingValue = "cdc", matchIfMissing = true)
@EnableConfigurationProperties({OnceRelayProperties.class, OnceCdcRelayProperties.class, OnceSlotProperties.class})
public class OnceCdcRelayAutoConfiguration {

    private static final Logger log = LoggerFactory.getLogger(OnceCdcRelayAutoConfiguration.class);

    /** The slot (and publication) every instance used before names were derived from the database. */
    static final String LEGACY_SLOT = "once_outbox";

    static final String DATABASE_AND_SCHEMA = "SELECT current_database(), current_schema()";

    static final String SLOT_DATABASE = "SELECT database FROM pg_replication_slots WHERE slot_name = ?";

    @Bean
    @ConditionalOnMissingBean
    CdcSettings onceCdcSettings(DataSource dataSource, ObjectProvider<JdbcConnectionDetails> details,
                                OnceCdcRelayProperties properties) {
        ReplicationConnection connection = ReplicationConnection.of(properties.getConnection(),
                details.getIfAvailable(), dataSource);
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        String[] where = jdbc.queryForObject(DATABASE_AND_SCHEMA, (rs, n) -> new String[] {rs.getString(1), rs.getString(2)});
        String schema = properties.getSchema().isBlank() ? where[1] : properties.getSchema();
        String slot = slotName(jdbc, properties.getSlotName(), where[0], schema);
        String publication = properties.getPublicationName().isBlank() ? slot : properties.getPublicationName();
        try {
            return new CdcSettings(connection.jdbcUrl(), connection.user(), connection.password(), schema, slot,
                    publication, properties.getHeartbeat(), properties.getLeaderPoll())
                    .withFailFast(properties.isFailFast());
        } catch (IllegalArgumentException e) {
            throw new OnceConfigurationException("once.outbox.relay.cdc.* is invalid: " + e.getMessage(),
                    "Set once.outbox.relay.cdc.slot-name and publication-name to 1-63 of [a-z0-9_]");
        }
    }

    /**
     * The configured slot, or one derived from the database and schema ({@link CdcSettings#slotNameFor}). Upgrading
     * from the single default of earlier versions: while the derived slot does not exist and {@value #LEGACY_SLOT}
     * belongs to this database, the relay keeps {@value #LEGACY_SLOT} (and its publication), so it resumes where it
     * stopped instead of snapshotting anew; a new slot is only ever created under the derived name.
     */
    static String slotName(JdbcTemplate jdbc, String configured, String database, String schema) {
        if (!configured.isBlank()) {
            return configured;
        }
        String derived = CdcSettings.slotNameFor(database, schema);
        if (jdbc.queryForList(SLOT_DATABASE, String.class, derived).isEmpty()
                && jdbc.queryForList(SLOT_DATABASE, String.class, LEGACY_SLOT).contains(database)) {
            log.info("CDC relay keeps its existing slot {} of database {} (the default name before {}); set "
                    + "once.outbox.relay.cdc.slot-name={} to say so", LEGACY_SLOT, database, derived, LEGACY_SLOT);
            return LEGACY_SLOT;
        }
        return derived;
    }

    /** Rows leave the outbox once the slot confirmed them ({@code dev.once.autoconfigure.OnceSlotAutoConfiguration}). */
    @Bean(destroyMethod = "")
    @ConditionalOnMissingBean
    SlotWatermarks onceSlotWatermarks(DataSource dataSource, CdcSettings settings, OnceSlotProperties slots,
                                      OnceRelayProperties relay) {
        return new SlotWatermarks(dataSource, settings.slotName(), slots.toOptions(relay.getRetention()));
    }

    @Bean(destroyMethod = "")
    @ConditionalOnMissingBean(OutboxRelay.class)
    OutboxRelay onceCdcRelay(DataSource dataSource, CdcSettings settings, EventTransport transport,
                             RelayListener listener, OnceRelayProperties relay, SlotWatermarks watermarks) {
        return new CdcRelay("cdc", dataSource, settings, transport, relay.toOptions(), listener, watermarks);
    }
}
