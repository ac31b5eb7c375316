package dev.once.relay.cdc;

import dev.once.relay.cdc.internal.PostgresCoordinates;
import java.time.Duration;

/**
 * Where and how the CDC relay reads the write-ahead log.
 *
 * @param jdbcUrl the database, as a {@code jdbc:postgresql://} URL: a direct connection, not one through a pooler in
 *                transaction mode, since Debezium opens a replication connection and the leader holds a session lock
 *                on it
 * @param schema the schema that holds {@code outbox_event}
 * @param slotName the logical replication slot; one per outbox table, shared by all instances of the service
 * @param publicationName the publication, limited to the outbox table; created when absent
 * @param heartbeat how often Debezium writes a heartbeat into the WAL and passes its position on, so that the slot
 *                  moves on a quiet outbox
 * @param leaderPoll how often a standby tries to become leader, and the leader checks its lock connection
 * @param retryFirst the pause after the relay could not lead (a misconfiguration, an engine failure, a lost
 *                   connection), doubled after every further failure up to {@code retryMax}
 * @param retryMax the longest pause between attempts while the problem lasts
 * @param failFast whether a misconfiguration that only an operator can fix (wal_level, a missing privilege, the
 *                 publication, a slot of another database), found by the first attempt to lead, fails
 *                 {@link CdcRelay#start()} instead of being retried with the relay's state FAILED
 */
public record CdcSettings(String jdbcUrl, String user, String password, String schema, String slotName,
                          String publicationName, Duration heartbeat, Duration leaderPoll, Duration retryFirst,
                          Duration retryMax, boolean failFast) {

    /**
     * A second: on a quiet stream the slot passes the last event's watermark only once a heartbeat has carried a later
     * position to the offsets, so rows leave about two heartbeats after the last event (a 100,000-row backlog took
     * 14-16 s to leave with 10 s beats). A beat is one logical message in the WAL and one record to the offsets.
     */
    public static final Duration HEARTBEAT = Duration.ofSeconds(1);
    public static final Duration LEADER_POLL = Duration.ofSeconds(1);
    public static final Duration RETRY_FIRST = Duration.ofSeconds(1);
    public static final Duration RETRY_MAX = Duration.ofSeconds(60);
    public static final boolean FAIL_FAST = true;

    public CdcSettings {
        if (retryFirst == null || retryMax == null || retryFirst.isNegative() || retryFirst.isZero()
                || retryMax.compareTo(retryFirst) < 0) {
            throw new IllegalArgumentException("retryFirst must be positive and retryMax >= retryFirst, were "
                    + retryFirst + " and " + retryMax);
        }
        PostgresCoordinates.fromJdbcUrl(jdbcUrl); // a PostgreSQL URL of one host, or the fix, before anything starts
        requireName("slotName", slotName, "[a-z0-9_]{1,63}");
        requireName("publicationName", publicationName, "[a-z0-9_]{1,63}");
        requireName("schema", schema, "[A-Za-z0-9_]{1,63}");
    }

    private static void requireName(String what, String name, String pattern) {
        if (name == null || !name.matches(pattern)) {
            throw new IllegalArgumentException(what + " must be 1-63 of " + pattern.replace("{1,63}", "") + ", was "
                    + name);
        }
    }

    /** Settings that retry and fail fast as by default ({@link #RETRY_FIRST}, {@link #RETRY_MAX}, {@link #FAIL_FAST}). */
    public CdcSettings(String jdbcUrl, String user, String password, String schema, String slotName,
                       String publicationName, Duration heartbeat, Duration leaderPoll) {
        this(jdbcUrl, user, password, schema, slotName, publicationName, heartbeat, leaderPoll, RETRY_FIRST, RETRY_MAX,
                FAIL_FAST);
    }

    /** Settings with the slot and publication named after the database and schema ({@link #slotNameFor}). */
    public static CdcSettings of(String jdbcUrl, String user, String password, String schema) {
        String slot = slotNameFor(PostgresCoordinates.fromJdbcUrl(jdbcUrl).database(), schema);
        return new CdcSettings(jdbcUrl, user, password, schema, slot, slot, HEARTBEAT, LEADER_POLL);
    }

    /**
     * The default slot of an outbox: {@code once_<database>}, or {@code once_<database>_<schema>} outside
     * {@code public}, lower-cased, with every character outside {@code [a-z0-9_]} replaced by {@code _}; a name longer
     * than PostgreSQL's 63 characters keeps its first 54 and a hash of the whole. Replication slots are cluster-wide,
     * so a name of their own keeps services that share one PostgreSQL cluster, each on its own database, apart.
     */
    public static String slotNameFor(String database, String schema) {
        String raw = "once_" + database + ("public".equals(schema) ? "" : "_" + schema);
        String name = raw.toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9_]", "_");
        return name.length() <= 63 ? name : name.substring(0, 54) + "_" + String.format("%08x", raw.hashCode());
    }

    public CdcSettings withSlot(String slot, String publication) {
        return new CdcSettings(jdbcUrl, user, password, schema, slot, publication, heartbeat, leaderPoll, retryFirst,
                retryMax, failFast);
    }

    public CdcSettings withTimings(Duration heartbeatEvery, Duration leaderPollEvery) {
        return new CdcSettings(jdbcUrl, user, password, schema, slotName, publicationName, heartbeatEvery,
                leaderPollEvery, retryFirst, retryMax, failFast);
    }

    public CdcSettings withFailFast(boolean fail) {
        return new CdcSettings(jdbcUrl, user, password, schema, slotName, publicationName, heartbeat, leaderPoll,
                retryFirst, retryMax, fail);
    }

    /** Never the password, nor the URL's parameters, which may carry it: settings end up in logs and test reports. */
    @Override
    public String toString() {
        return "CdcSettings[" + PostgresCoordinates.withoutParameters(jdbcUrl) + " as " + user + ", schema " + schema
                + ", slot " + slotName + ", publication " + publicationName + "]";
    }
}
