package dev.once.relay.cdc.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.OnceConfigurationException;
import dev.once.OnceDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.jdbc.autoconfigure.JdbcConnectionDetails;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

/** The CDC relay connects where the application's DataSource does, whoever built it; never from the Environment. */
class ReplicationConnectionTest {

    @Test
    void spring_boots_connection_details_come_first() {
        JdbcConnectionDetails details = new JdbcConnectionDetails() {
            @Override
            public String getUsername() {
                return "svc";
            }

            @Override
            public String getPassword() {
                return "s3cret";
            }

            @Override
            public String getJdbcUrl() {
                return "jdbc:postgresql://db.internal:6432/orders";
            }
        };

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
    void a_data_source_that_does_not_say_where_it_connects_is_one_clear_configuration_error() {
        assertThatThrownBy(() -> ReplicationConnection.of(null, new SimpleDriverDataSource()))
                .isInstanceOf(OnceConfigurationException.class)
                .hasMessageContaining("JdbcConnectionDetails").hasMessageContaining("once.outbox.relay.mode=polling");
    }
}
