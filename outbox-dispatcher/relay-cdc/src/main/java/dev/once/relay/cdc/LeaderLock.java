package dev.once.relay.cdc;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Leadership of one CDC relay: a session-level advisory lock held on a dedicated connection of its own to PostgreSQL
 * itself, the relay's own URL (not a pooled one, whose session would outlive {@code close()}, and never through a pooler
 * in transaction mode, which {@link CdcPreflight#throughPooler} refuses first). PostgreSQL releases the lock when that
 * connection ends, so a leader that dies, or loses its database connection, gives way to a standby. Used by one
 * thread.
 */
final class LeaderLock implements AutoCloseable {

    /** The advisory-lock namespace of relay leadership (first key of {@code pg_try_advisory_lock(int, int)}). */
    static final int LEADER_LOCK_SPACE = 0x0CE0_0002;

    static final String TRY_LOCK = "SELECT pg_try_advisory_lock(?, hashtext(?))";

    private final CdcSettings settings;
    private Connection connection;
    private boolean held;

    LeaderLock(CdcSettings settings) {
        this.settings = settings;
    }

    /** Tries to take the lock; true when this instance holds it now. */
    boolean tryAcquire() throws SQLException {
        if (held) {
            return true;
        }
        if (connection == null || !connection.isValid(2)) {
            close();
            connection = DriverManager.getConnection(settings.jdbcUrl(), settings.user(), settings.password());
        }
        try (PreparedStatement ps = connection.prepareStatement(TRY_LOCK)) {
            ps.setInt(1, LEADER_LOCK_SPACE);
            ps.setString(2, settings.slotName());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                held = rs.getBoolean(1);
            }
        }
        return held;
    }

    /** Whether the lock's connection is open (the lock may be another instance's). */
    boolean connected() {
        return connection != null;
    }

    /** Whether the lock is still held: its connection answers. */
    boolean stillHeld() {
        try {
            return held && connection != null && connection.isValid(2);
        } catch (SQLException e) {
            return false;
        }
    }

    /** Gives leadership up by closing the connection, which releases the lock whatever state it is in. */
    @Override
    public void close() {
        held = false;
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // the lock goes with the connection either way
            }
            connection = null;
        }
    }
}
