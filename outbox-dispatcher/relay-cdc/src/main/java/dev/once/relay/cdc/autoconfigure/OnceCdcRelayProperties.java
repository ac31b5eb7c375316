package dev.once.relay.cdc.autoconfigure;

import dev.once.relay.cdc.CdcSettings;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * {@code once.outbox.relay.cdc.*}: where and how the CDC relay reads the write-ahead log. Defaults: {@link CdcSettings}.
 * The watermarks of its slot are {@code once.outbox.relay.slot.*}.
 */
@ConfigurationProperties("once.outbox.relay.cdc")
public class OnceCdcRelayProperties {

    /** The schema of the outbox table; empty means the connection's current schema. */
    private String schema = "";

    /**
     * The logical replication slot. Slots are cluster-wide: empty derives a name from the database and schema
     * ({@code once_<database>}, or {@code once_<database>_<schema>} outside {@code public}), so that services on one
     * PostgreSQL cluster never share one. An existing slot {@code once_outbox} of this database (the default of
     * earlier versions) is kept.
     */
    private String slotName = "";

    /** The publication; empty means the slot's name. */
    private String publicationName = "";

    /**
     * The relay's own connection, for Debezium's replication connection and the leader's lock: both need a session of
     * their own on PostgreSQL itself. Empty, it is the application's DataSource's (its JdbcConnectionDetails, or its
     * HikariCP pool); set it when that DataSource goes through a pooler in transaction mode (PgBouncer).
     */
    private Connection connection = new Connection("", "", "");

    /** How often the relay writes a heartbeat into the WAL, so that a quiet outbox moves the slot forward. */
    private Duration heartbeat = CdcSettings.HEARTBEAT;

    /** How often a standby tries to become leader, and the leader checks its lock connection. */
    private Duration leaderPoll = CdcSettings.LEADER_POLL;

    /**
     * Whether a misconfiguration that only an operator can fix (wal_level, the REPLICATION privilege, a publication
     * the role may not create, a slot of another database), found when the application starts, fails the start. When
     * false, or when it appears later, the relay retries (1 s doubling to 60 s) with its health DOWN and the reason.
     */
    private boolean failFast = CdcSettings.FAIL_FAST;

    public String getSchema() {
        return schema;
    }

    public void setSchema(String schema) {
        this.schema = schema;
    }

    public String getSlotName() {
        return slotName;
    }

    public void setSlotName(String slotName) {
        this.slotName = slotName;
    }

    public String getPublicationName() {
        return publicationName;
    }

    public void setPublicationName(String publicationName) {
        this.publicationName = publicationName;
    }

    public Duration getHeartbeat() {
        return heartbeat;
    }

    public void setHeartbeat(Duration heartbeat) {
        this.heartbeat = heartbeat;
    }

    public Duration getLeaderPoll() {
        return leaderPoll;
    }

    public void setLeaderPoll(Duration leaderPoll) {
        this.leaderPoll = leaderPoll;
    }

    public boolean isFailFast() {
        return failFast;
    }

    public void setFailFast(boolean failFast) {
        this.failFast = failFast;
    }

    public Connection getConnection() {
        return connection;
    }

    public void setConnection(Connection connection) {
        this.connection = connection;
    }

    /**
     * {@code once.outbox.relay.cdc.connection.*}: a direct connection to PostgreSQL, past any pooler.
     *
     * @param url a {@code jdbc:postgresql://} URL of PostgreSQL itself, one host (the primary); empty: the application DataSource's
     * @param username the role to connect as (it needs REPLICATION); empty: the application DataSource's
     * @param password its password; with an empty username, the application DataSource's
     */
    public record Connection(@DefaultValue("") String url, @DefaultValue("") String username,
                             @DefaultValue("") String password) {
    }
}
