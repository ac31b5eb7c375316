package dev.once.test;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Whatever server was found, it is real, logical-replication capable, and each class gets a schema of its own. */
class TestDatabaseIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().sessionTimeZone("Pacific/Chatham");

    @RegisterExtension
    static final TestDatabase other = TestDatabase.create();

    @Test
    void the_server_runs_with_logical_wal() throws SQLException {
        assertThat(query(db.dataSource(), "SHOW wal_level")).isEqualTo("logical");
    }

    @Test
    void connections_resolve_names_into_the_class_schema_with_the_requested_time_zone() throws SQLException {
        assertThat(query(db.dataSource(), "SELECT current_schema()")).isEqualTo(db.schema());
        assertThat(query(db.dataSource(), "SHOW TimeZone")).isEqualTo("Pacific/Chatham");
    }

    @Test
    void two_databases_do_not_see_each_others_tables() throws SQLException {
        execute(db.dataSource(), "CREATE TABLE only_here (id int)");

        assertThat(query(other.dataSource(), "SELECT count(*) FROM pg_tables WHERE tablename = 'only_here' AND schemaname = current_schema()"))
                .isEqualTo("0");
        assertThat(other.schema()).isNotEqualTo(db.schema());
    }

    private static String query(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static void execute(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
