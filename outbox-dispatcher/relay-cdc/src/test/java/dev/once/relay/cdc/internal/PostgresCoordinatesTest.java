package dev.once.relay.cdc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.OnceConfigurationException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What Debezium is told of the JDBC URL the relay is configured with. */
class PostgresCoordinatesTest {

    @Test
    void host_port_and_database_come_apart_and_a_url_without_tls_parameters_leaves_debeziums_default() {
        PostgresCoordinates db = PostgresCoordinates.fromJdbcUrl("jdbc:postgresql://db.internal:6432/orders?ApplicationName=x");

        assertThat(db.host()).isEqualTo("db.internal");
        assertThat(db.port()).isEqualTo(6432);
        assertThat(db.database()).isEqualTo("orders");
        assertThat(db.tls()).isEmpty();
    }

    @Test
    void the_drivers_tls_parameters_become_debeziums_decoded_and_others_stay_out() {
        PostgresCoordinates db = PostgresCoordinates.fromJdbcUrl("jdbc:postgresql://db/orders?sslmode=verify-full"
                + "&sslrootcert=/etc/once/root%20ca.crt&sslcert=/etc/once/relay.crt&sslkey=/etc/once/relay.pk8"
                + "&sslpassword=s%26cret&sslfactory=org.postgresql.ssl.DefaultJavaSSLFactory&connectTimeout=5");

        assertThat(db.tls()).isEqualTo(Map.of("database.sslmode", "verify-full",
                "database.sslrootcert", "/etc/once/root ca.crt", "database.sslcert", "/etc/once/relay.crt",
                "database.sslkey", "/etc/once/relay.pk8", "database.sslpassword", "s&cret",
                "database.sslfactory", "org.postgresql.ssl.DefaultJavaSSLFactory"));
        assertThat(db.port()).isEqualTo(5432);
        assertThat(db).hasToString("db:5432/orders");
    }

    @Test
    void ssl_true_without_a_mode_verifies_the_server_fully_as_the_driver_does() {
        assertThat(PostgresCoordinates.fromJdbcUrl("jdbc:postgresql://db/orders?ssl=true").tls())
                .isEqualTo(Map.of("database.sslmode", "verify-full"));
        assertThat(PostgresCoordinates.fromJdbcUrl("jdbc:postgresql://db/orders?ssl=true&sslmode=require").tls())
                .isEqualTo(Map.of("database.sslmode", "require"));
    }

    @Test
    void a_url_of_another_database_is_refused_without_its_parameters() {
        assertThatThrownBy(() -> PostgresCoordinates.fromJdbcUrl("jdbc:mysql://db/orders?password=s3cret"))
                .isInstanceOf(OnceConfigurationException.class).hasMessageStartingWith(
                        "The CDC relay's connection URL jdbc:mysql://db/orders is not a PostgreSQL JDBC URL. Set "
                        + "once.outbox.relay.cdc.connection.url").hasMessageNotContaining("s3cret");
    }

    @Test
    void a_url_with_several_hosts_is_refused_with_the_setting_that_names_the_primary() {
        assertThatThrownBy(() -> PostgresCoordinates.fromJdbcUrl(
                "jdbc:postgresql://pg-1:5432,pg-2:5433/orders?targetServerType=primary&password=s3cret"))
                .isInstanceOf(OnceConfigurationException.class)
                .hasMessageStartingWith("The CDC relay's connection URL jdbc:postgresql://pg-1:5432,pg-2:5433/orders "
                        + "names several hosts")
                .hasMessageContaining("Set once.outbox.relay.cdc.connection.url").hasMessageNotContaining("s3cret");
    }
}
