package dev.once.relay.cdc;

import dev.once.OnceConfigurationException;
import dev.once.relay.cdc.internal.PostgresCoordinates;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.List;
import java.util.Properties;
import java.util.stream.Collectors;
import org.postgresql.PGProperty;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

/**
 * What the CDC relay checks with plain SQL when it becomes leader, before Debezium starts: each misconfiguration that
 * would otherwise surface as a Debezium stack trace on every attempt becomes one {@link OnceConfigurationException}
 * that names the fix. It also creates the publication when it is missing ({@link CdcPublication}), and drops a slot
 * that PostgreSQL invalidated, so that Debezium creates it anew and publishes every row not yet confirmed. Runs on a
 * connection of the role Debezium connects as.
 */
final class CdcPreflight {

    private static final Logger log = LoggerFactory.getLogger(CdcRelay.class);

    /** What the server runs with: its version, wal_level, the database, and how many slots it may have. */
    static final String SERVER = """
            SELECT current_setting('server_version_num')::int, current_setting('wal_level'), current_database(),
                   current_setting('max_replication_slots')::int
            """;
    /**
     * PostgreSQL 14: pgoutput decodes logical messages, which the heartbeat writes ({@code pg_logical_emit_message}),
     * so that a quiet outbox moves the slot without the relay's role writing to any table.
     */
    static final int MIN_VERSION = 140_000;
    /**
     * The role Debezium connects as, quoted for SQL, and whether PostgreSQL lets it open a replication connection:
     * with REPLICATION or SUPERUSER, or, on Amazon RDS, as a member of {@code rds_replication} (how RDS grants it).
     */
    static final String ROLE = """
            SELECT quote_ident(r.rolname), r.rolsuper OR r.rolreplication OR EXISTS (
                SELECT 1 FROM pg_roles g WHERE g.rolname = 'rds_replication' AND pg_has_role(r.oid, g.oid, 'MEMBER'))
            FROM pg_roles r WHERE r.rolname = current_user
            """;
    /** Drops a slot PostgreSQL invalidated; an active one (a walsender still holds it) is refused. */
    static final String DROP_LOST = """
            SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots
            WHERE slot_name = ? AND wal_status = 'lost'
            """;
    /** Every slot of the cluster; a physical slot has no database. */
    static final String SLOTS = """
            SELECT slot_name, slot_type, database, active, wal_status FROM pg_replication_slots ORDER BY slot_name
            """;
    /** PostgreSQL's {@code insufficient_privilege}. */
    static final String INSUFFICIENT_PRIVILEGE = "42501";
    /** How many of the slots that fill {@code max_replication_slots} a message names. */
    static final int SLOTS_NAMED = 10;
    /** {@code protocol_violation}: how PgBouncer refuses the {@code replication} startup parameter. */
    static final String PROTOCOL_VIOLATION = "08P01";

    /** A misconfiguration found; {@code lasting} when only an operator can end it, so that it may fail the start. */
    record Finding(OnceConfigurationException error, boolean lasting) {}

    record Server(int version, String walLevel, String database, int maxSlots) {}

    private final JdbcTemplate jdbc;
    private final CdcSettings settings;

    private CdcPreflight(JdbcTemplate jdbc, CdcSettings settings) {
        this.jdbc = jdbc;
        this.settings = settings;
    }

    /**
     * The first misconfiguration found, in the order a fix must follow (what PostgreSQL runs with, who connects, the
     * slot, the publication); null when Debezium may start. Checked on a connection of the role Debezium connects as,
     * which may differ from the application DataSource's.
     */
    static Finding check(CdcSettings settings) {
        SingleConnectionDataSource own = new SingleConnectionDataSource(settings.jdbcUrl(), settings.user(),
                settings.password(), true);
        try {
            return new CdcPreflight(new JdbcTemplate(own), settings).check();
        } finally {
            own.destroy();
        }
    }

    private Finding check() {
        PostgresCoordinates at = PostgresCoordinates.fromJdbcUrl(settings.jdbcUrl());
        Server server = jdbc.queryForObject(SERVER, (rs, n) -> new Server(rs.getInt(1), rs.getString(2),
                rs.getString(3), rs.getInt(4)));
        if (server.version() < MIN_VERSION) {
            return lasting("PostgreSQL at " + at.host() + ":" + at.port() + " is version " + server.version() + "; "
                    + "the CDC relay needs 14 or later (pgoutput decodes the heartbeat's logical messages from 14 on)",
                    "Upgrade PostgreSQL, or set once.outbox.relay.mode=polling");
        }
        if (!"logical".equals(server.walLevel())) {
            return lasting("PostgreSQL at " + at.host() + ":" + at.port() + " runs with wal_level = "
                    + server.walLevel() + "; the CDC relay reads the outbox from the write-ahead log by logical "
                    + "decoding, which needs wal_level = logical", "Set wal_level = logical (ALTER SYSTEM SET wal_level "
                    + "= logical, or in postgresql.conf) and restart PostgreSQL, or set once.outbox.relay.mode=polling "
                    + "to relay without logical decoding");
        }
        Object[] role = jdbc.queryForObject(ROLE, (rs, n) -> new Object[] {rs.getString(1), rs.getBoolean(2)});
        String user = (String) role[0];
        if (!(Boolean) role[1]) {
            return lasting("The role " + user + " that the CDC relay connects as has neither REPLICATION nor SUPERUSER, "
                    + "so PostgreSQL refuses it the replication connection that reads the write-ahead log", "As a "
                    + "superuser run ALTER ROLE " + user + " REPLICATION; (on Amazon RDS: GRANT rds_replication TO "
                    + user + ";), or set once.outbox.relay.mode=polling");
        }
        Finding slot = slot(server);
        return slot != null ? slot : publication(user, server); // last: the only check that changes anything
    }

    /**
     * Whether the relay's own URL reaches PostgreSQL itself: Debezium's replication connection and the leader's session
     * lock need that, and a pooler in transaction mode (PgBouncer's) refuses the first and would break the second (the
     * lock would stay on a pooled server session). Tried with a replication connection before the lock is taken; null
     * when it opens, or fails for a reason the preflight names.
     */
    static Finding throughPooler(CdcSettings settings) {
        Properties replication = new Properties();
        PGProperty.USER.set(replication, settings.user());
        PGProperty.PASSWORD.set(replication, settings.password());
        PGProperty.REPLICATION.set(replication, "database");
        PGProperty.ASSUME_MIN_SERVER_VERSION.set(replication, "10");
        PGProperty.PREFER_QUERY_MODE.set(replication, "simple");
        try (Connection ignored = DriverManager.getConnection(settings.jdbcUrl(), replication)) {
            return null;
        } catch (SQLException e) {
            if (!PROTOCOL_VIOLATION.equals(e.getSQLState())) {
                return null;
            }
            return lasting("The CDC relay's connection to " + PostgresCoordinates.fromJdbcUrl(settings.jdbcUrl())
                    + " refuses replication connections (SQLState " + PROTOCOL_VIOLATION + ": " + e.getMessage()
                    + "): it goes through a connection pooler, such as PgBouncer, while Debezium's replication "
                    + "connection and the leader's session lock need PostgreSQL itself", "Set once.outbox.relay.cdc."
                    + "connection.url (with username and password) to a direct jdbc:postgresql:// URL of the server, "
                    + "keeping the application's DataSource on the pooler");
        }
    }

    private Finding publication(String user, Server server) {
        CdcPublication publication = new CdcPublication(jdbc, settings, server.version());
        try {
            publication.ensure();
            return null;
        } catch (DataAccessException e) {
            if (!(e.getMostSpecificCause() instanceof SQLException sql)
                    || !INSUFFICIENT_PRIVILEGE.equals(sql.getSQLState())) {
                throw e;
            }
            String outbox = settings.schema() + ".outbox_event";
            return new Finding(new OnceConfigurationException("The role " + user + " may not create the publication "
                    + settings.publicationName() + " (SQLState 42501, insufficient_privilege): that takes CREATE on "
                    + "database " + server.database() + " and ownership of " + outbox, "Create it once as the table's "
                    + "owner: " + publication.createStatement() + "; or let the relay create it: GRANT CREATE ON "
                    + "DATABASE " + server.database() + " TO " + user + "; and ALTER TABLE " + outbox + " OWNER TO "
                    + user + ";", e), true);
        }
    }

    private Finding slot(Server server) {
        String slot = settings.slotName();
        String database = server.database();
        List<Slot> taken = jdbc.query(SLOTS, (rs, n) -> new Slot(rs.getString(1), rs.getString(2), rs.getString(3),
                rs.getBoolean(4), rs.getString(5)));
        Slot existing = taken.stream().filter(s -> s.name().equals(slot)).findFirst().orElse(null);
        if (existing != null) {
            if (database.equals(existing.database()) && "logical".equals(existing.type())) {
                if ("lost".equals(existing.walStatus())) {
                    log.warn("Replication slot {} was invalidated by PostgreSQL (wal_status lost: the WAL it needed was "
                            + "removed); it is dropped and created anew, and every row it did not confirm is published "
                            + "again", slot);
                    jdbc.queryForList(DROP_LOST, slot);
                }
                return null;
            }
            String derived = CdcSettings.slotNameFor(database, settings.schema());
            return lasting("Replication slot " + slot + (existing.database() == null
                    ? " is a physical slot, not a logical one of database " + database
                    : " belongs to database " + existing.database() + ", not " + database), "Replication slots are "
                    + "cluster-wide and each belongs to one database: set once.outbox.relay.cdc.slot-name to a name of "
                    + "this service's own" + (slot.equals(derived) ? ""
                    : " (left empty, the relay names it after the database: " + derived + ")"));
        }
        int max = server.maxSlots();
        if (taken.size() < max) {
            return null;
        }
        String named = taken.stream().limit(SLOTS_NAMED).map(Slot::describe).collect(Collectors.joining(", "))
                + (taken.size() > SLOTS_NAMED ? " and " + (taken.size() - SLOTS_NAMED) + " more" : "");
        // Not lasting: another service dropping its slot ends it without anyone touching this one.
        return new Finding(new OnceConfigurationException("Replication slot " + slot + " does not exist and cannot be "
                + "created: max_replication_slots = " + max + ", and " + taken.size() + (taken.size() == 1
                ? " slot exists (" : " slots exist (") + named + ")",
                "Raise max_replication_slots (ALTER SYSTEM SET max_replication_slots = " + (max + 1) + ", then restart "
                + "PostgreSQL), or drop a slot nothing uses with SELECT pg_drop_replication_slot('<name>'); the "
                + "relay retries until one is free"), false);
    }

    private static Finding lasting(String problem, String fix) {
        return new Finding(new OnceConfigurationException(problem, fix), true);
    }

    /** A slot of the cluster, as the exhausted-slots message names it. */
    record Slot(String name, String type, String database, boolean active, String walStatus) {

        String describe() {
            return name + " (" + (database == null ? type : "database " + database) + (active ? "" : ", inactive") + ")";
        }
    }
}
