package dev.once.test;

import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * Drops what a test's CDC relay left on the shared server: its replication slot (an abandoned slot holds WAL forever)
 * and its publication. Waits first until the slot is inactive: the walsender of a closed relay ends a moment after
 * its connection.
 */
public final class ReplicationCleanup {

    static final String ACTIVE = "SELECT count(*) FROM pg_replication_slots WHERE slot_name = ? AND active";
    static final String DROP_SLOT = "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = ?";

    private ReplicationCleanup() {
    }

    public static void drop(DataSource dataSource, String slot, String publication) {
        await("slot " + slot + " inactive").atMost(Duration.ofSeconds(30)).until(() -> {
            try (Connection c = dataSource.getConnection(); PreparedStatement active = c.prepareStatement(ACTIVE)) {
                active.setString(1, slot);
                try (ResultSet r = active.executeQuery()) {
                    return r.next() && r.getLong(1) == 0;
                }
            }
        });
        try (Connection c = dataSource.getConnection(); PreparedStatement drop = c.prepareStatement(DROP_SLOT);
             Statement s = c.createStatement()) {
            drop.setString(1, slot);
            drop.executeQuery().close();
            s.execute("DROP PUBLICATION IF EXISTS " + publication);
        } catch (SQLException e) {
            throw new IllegalStateException("Could not drop slot " + slot + " or publication " + publication, e);
        }
    }
}
