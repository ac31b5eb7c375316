package dev.once.relay.cdc;

import dev.once.OnceConfigurationException;
import dev.once.relay.cdc.internal.PostgresCoordinates;
import java.sql.SQLException;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What the CDC relay checks with plain SQL when it becomes leader, before Debezium starts: each misconfiguration that
 * would otherwise surface as a Debezium stack trace on every attempt becomes one {@link OnceConfigurationException}
 * that names the fix. It also creates the publication when it is missing ({@link CdcPublication}). Runs on a
 * connection of the role Debezium connects as.
 */
final class CdcPreflight {

    static final String WAL_LEVEL = "SELECT current_setting('wal_level')";
    /**
     * The role Debezium connects as, quoted for SQL, and whether PostgreSQL lets it open a replication connection:
     * with REPLICATION or SUPERUSER, or, on Amazon RDS, as a member of {@code rds_replication} (how RDS grants it).
     */
    static final String ROLE = """
            SELECT quote_ident(r.rolname), r.rolsuper OR r.rolreplication OR EXISTS (
                SELECT 1 FROM pg_roles g WHERE g.rolname = 'rds_replication' AND pg_has_role(r.oid, g.oid, 'MEMBER'))
            FROM pg_roles r WHERE r.rolname = current_user
            """;
    static final String DATABASE = "SELECT current_database()";
    /** The slot's type and database; a physical slot has none. */
    static final String SLOT = "SELECT slot_type, database FROM pg_replication_slots WHERE slot_name = ?";
    static final String SLOTS = """
            SELECT slot_name, slot_type, database, active FROM pg_replication_slots ORDER BY slot_name
            """;
    static final String MAX_SLOTS = "SELECT current_setting('max_replication_slots')::int";
    /** PostgreSQL's {@code insufficient_privilege}. */
    static final String INSUFFICIENT_PRIVILEGE = "42501";
    /** How many of the slots that fill {@code max_replication_slots} a message names. */
    static final int SLOTS_NAMED = 10;

    /** A misconfiguration found; {@code lasting} when only an operator can end it, so that it may fail the start. */
    record Finding(OnceConfigurationException error, boolean lasting) {
    }

    private final JdbcTemplate jdbc;
    private final CdcSettings settings;

    CdcPreflight(JdbcTemplate jdbc, CdcSettings settings) {
        this.jdbc = jdbc;
        this.settings = settings;
    }

    /**
     * The first misconfiguration found, in the order a fix must follow (what PostgreSQL runs with, who connects, the
     * slot, the publication); null when Debezium may start.
     */
    Finding check() {
        String walLevel = jdbc.queryForObject(WAL_LEVEL, String.class);
        if (!"logical".equals(walLevel)) {
            PostgresCoordinates at = PostgresCoordinates.fromJdbcUrl(settings.jdbcUrl());
            return lasting("PostgreSQL at " + at.host() + ":" + at.port() + " runs with wal_level = " + walLevel
                    + "; the CDC relay reads the outbox from the write-ahead log by logical decoding, which needs "
                    + "wal_level = logical", "Set wal_level = logical (ALTER SYSTEM SET wal_level = logical, or in "
                    + "postgresql.conf) and restart PostgreSQL, or set once.outbox.relay.mode=polling to relay without "
                    + "logical decoding");
        }
        Object[] role = jdbc.queryForObject(ROLE, (rs, n) -> new Object[] {rs.getString(1), rs.getBoolean(2)});
        String user = (String) role[0];
        if (!(Boolean) role[1]) {
            return lasting("The role " + user + " that the CDC relay connects as has neither REPLICATION nor SUPERUSER, "
                    + "so PostgreSQL refuses it the replication connection that reads the write-ahead log", "As a "
                    + "superuser run ALTER ROLE " + user + " REPLICATION; (on Amazon RDS: GRANT rds_replication TO "
                    + user + ";), or set once.outbox.relay.mode=polling");
        }
        String database = jdbc.queryForObject(DATABASE, String.class);
        Finding slot = slot(database);
        return slot != null ? slot : publication(user, database); // last: the only check that changes anything
    }

    private Finding publication(String user, String database) {
        CdcPublication publication = new CdcPublication(jdbc, settings);
        try {
            publication.ensure();
            return null;
        } catch (DataAccessException e) {
            if (!(e.getMostSpecificCause() instanceof SQLException sql)
                    || !INSUFFICIENT_PRIVILEGE.equals(sql.getSQLState())) {
                throw e;
            }
            String outbox = settings.schema() + ".outbox_event";
            String beats = settings.schema() + ".once_relay_heartbeat";
            return new Finding(new OnceConfigurationException("The role " + user + " may not create the publication "
                    + settings.publicationName() + " (SQLState 42501, insufficient_privilege): that takes CREATE on "
                    + "database " + database + " and ownership of " + outbox + " and " + beats, "Create it once as "
                    + "the tables' owner: " + publication.createStatement() + "; or let the relay create it: GRANT "
                    + "CREATE ON DATABASE " + database + " TO " + user + "; and ALTER TABLE " + outbox + " OWNER TO "
                    + user + "; ALTER TABLE " + beats + " OWNER TO " + user + ";", e), true);
        }
    }

    private Finding slot(String database) {
        String slot = settings.slotName();
        List<Slot> found = jdbc.query(SLOT, (rs, n) -> new Slot(slot, rs.getString(1), rs.getString(2), false), slot);
        if (!found.isEmpty()) {
            Slot existing = found.get(0);
            if (database.equals(existing.database()) && "logical".equals(existing.type())) {
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
        List<Slot> taken = jdbc.query(SLOTS, (rs, n) -> new Slot(rs.getString(1), rs.getString(2), rs.getString(3),
                rs.getBoolean(4)));
        int max = Objects.requireNonNull(jdbc.queryForObject(MAX_SLOTS, Integer.class));
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

    /** A slot as the exhausted-slots message names it. */
    record Slot(String name, String type, String database, boolean active) {

        String describe() {
            return name + " (" + (database == null ? type : "database " + database) + (active ? "" : ", inactive") + ")";
        }
    }
}
