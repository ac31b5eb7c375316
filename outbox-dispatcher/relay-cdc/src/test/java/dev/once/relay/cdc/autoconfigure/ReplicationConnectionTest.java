package dev.once.relay.cdc.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.OnceConfigurationException;
import dev.once.OnceDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.jdbc.autoconfigure.JdbcConnectionDetails;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

/**
 * The CDC relay connects where once.outbox.relay.cdc.connection says, or else where the application's DataSource does,
 * whoever built it; never from the Environment's spring.datasource.
 */
class ReplicationConnectionTest {

    @Test
    void a_direct_connection_of_its_own_comes_first_with_the_datasources_credentials_unless_it_names_its_own() {
        JdbcConnectionDetails pooled = details("jdbc:postgresql://pgbouncer.internal:6432/orders?prepareThreshold=0",
                "svc", "s3cret");
        String direct = "jdbc:postgresql://postgres.internal:5432/orders";

        assertThat(ReplicationConnection.of(new OnceCdcRelayProperties.Connection(direct, "", ""), pooled,
                new SimpleDriverDataSource())).isEqualTo(new ReplicationConnection(direct, "svc", "s3cret"));
        assertThat(ReplicationConnection.of(new OnceCdcRelayProperties.Connection(direct, "relay", "relay-secret"),
                pooled, new SimpleDriverDataSource())).isEqualTo(new ReplicationConnection(direct, "relay", "relay-secret"));
        assertThat(ReplicationConnection.of(new OnceCdcRelayProperties().getConnection(), pooled,
                new SimpleDriverDataSource()).jdbcUrl()).as("none configured")
                .startsWith("jdbc:postgresql://pgbouncer.internal:6432/orders");
    }

    @Test
    void spring_boots_connection_details_come_first() {
        JdbcConnectionDetails details = details("jdbc:postgresql://db.internal:6432/orders", "svc", "s3cret");

        ReplicationConnection connection = ReplicationConnection.of(details, new SimpleDriverDataSource());

        assertThat(connection).isEqualTo(new ReplicationConnection("jdbc:postgresql://db.internal:6432/orders", "svc",
                "s3cret"));
        assertThat(connection.toString()).doesNotContain("s3cret");
    }

    @Test
    void a_hikari_pool_built_in_code_says_where_it_connects_even_behind_once_data_source() {
        try (HikariDataSource pool = new HikariDataSource()) {
            pool.setJdbcUrl("jdbc:postgresql://127.0.0.1:5432/billing");
            pool.setUsername("billing");
            pool.setPassword("pw");

            assertThat(ReplicationConnection.of(null, new OnceDataSource(pool)))
                    .isEqualTo(new ReplicationConnection("jdbc:postgresql://127.0.0.1:5432/billing", "billing", "pw"));
        }
    }

    @Test
    void a_hikari_pools_driver_properties_join_the_url_where_it_does_not_set_them_so_the_relay_uses_the_pools_tls() {
        try (HikariDataSource pool = new HikariDataSource()) {
            pool.setJdbcUrl("jdbc:postgresql://db.internal:5432/billing?sslmode=require");
            pool.setUsername("billing");
            pool.setPassword("pw");
            pool.addDataSourceProperty("sslmode", "disable"); // the URL's own says otherwise, and wins, as in the driver
            pool.addDataSourceProperty("sslrootcert", "/etc/once/root ca.crt");
            pool.addDataSourceProperty("sslpassword", "s3cret");
            pool.addDataSourceProperty("password", "not-a-parameter");

            ReplicationConnection connection = ReplicationConnection.of(null, new OnceDataSource(pool));

            assertThat(connection).isEqualTo(new ReplicationConnection("jdbc:postgresql://db.internal:5432/billing"
                    + "?sslmode=require&sslpassword=s3cret&sslrootcert=%2Fetc%2Fonce%2Froot+ca.crt", "billing", "pw"));
            assertThat(connection.toString()).doesNotContain("s3cret").doesNotContain("pw");
        }
    }

    @Test
    void with_spring_boots_connection_details_the_pools_driver_properties_join_their_url() {
        JdbcConnectionDetails details = details("jdbc:postgresql://db.internal:6432/orders", "svc", "s3cret");
        try (HikariDataSource pool = new HikariDataSource()) {
            pool.setJdbcUrl("jdbc:postgresql://db.internal:6432/orders");
            pool.addDataSourceProperty("sslmode", "verify-full");

            assertThat(ReplicationConnection.of(details, pool).jdbcUrl())
                    .isEqualTo("jdbc:postgresql://db.internal:6432/orders?sslmode=verify-full");
        }
    }

    @Test
    void a_data_source_that_does_not_say_where_it_connects_is_one_clear_configuration_error() {
        assertThatThrownBy(() -> ReplicationConnection.of(null, new SimpleDriverDataSource()))
                .isInstanceOf(OnceConfigurationException.class)
                .hasMessageContaining("JdbcConnectionDetails").hasMessageContaining("once.outbox.relay.mode=polling");
    }

    private static JdbcConnectionDetails details(String url, String user, String password) {
        return new JdbcConnectionDetails() {
            @Override
            public String getUsername() {
                return user;
            }

            @Override
            public String getPassword() {
                return password;
            }

            @Override
            public String getJdbcUrl() {
                return url;
            }
        };
    }
}
