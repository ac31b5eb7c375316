package dev.once.relay.cdc.autoconfigure;

import dev.once.relay.cdc.CdcSettings;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** {@code once.outbox.relay.cdc.*}: where and how the CDC relay reads the write-ahead log. Defaults: {@link CdcSettings}. */
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

    /** How often the relay writes its heartbeat, so that a quiet database moves the slot forward. */
    private Duration heartbeat = CdcSettings.HEARTBEAT;

    /** How often a standby tries to become leader, and the leader checks its lock connection. */
    private Duration leaderPoll = CdcSettings.LEADER_POLL;

    /**
     * Whether a misconfiguration that only an operator can fix (wal_level, the REPLICATION privilege, a publication
     * the role may not create, a slot of another database), found when the application starts, fails the start. When
     * false, or when it appears later, the relay retries (1 s doubling to 60 s) with its health DOWN and the reason.
     */
    private boolean failFast = CdcSettings.FAIL_FAST;

    /**
     * How many batches the relay may publish ahead of their bookkeeping (deleting the rows Kafka acknowledged), so
     * that PostgreSQL keeping writes waiting (a checkpoint) does not hold up publishing; a crash publishes them again.
     * 0 waits for each batch's bookkeeping.
     */
    private int aheadOfBookkeeping = CdcSettings.AHEAD_OF_BOOKKEEPING;

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

    public int getAheadOfBookkeeping() {
        return aheadOfBookkeeping;
    }

    public void setAheadOfBookkeeping(int aheadOfBookkeeping) {
        this.aheadOfBookkeeping = aheadOfBookkeeping;
    }
}
