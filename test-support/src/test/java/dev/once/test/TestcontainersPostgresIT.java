package dev.once.test;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import org.junit.jupiter.api.Test;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.postgresql.PostgreSQLContainer;

/** The container the finder falls back to when Docker is present; skipped cleanly where there is no Docker engine. */
@Testcontainers(disabledWithoutDocker = true)
class TestcontainersPostgresIT {

    @Container
    static final PostgreSQLContainer postgres = new PostgreSQLContainer("postgres:15")
            .withCommand("postgres", "-c", "wal_level=logical");

    @Test
    void the_container_runs_with_logical_wal() throws Exception {
        try (Connection c = DriverManager.getConnection(postgres.getJdbcUrl(), postgres.getUsername(), postgres.getPassword());
             ResultSet rs = c.createStatement().executeQuery("SHOW wal_level")) {
            rs.next();
            assertThat(rs.getString(1)).isEqualTo("logical");
        }
    }
}
