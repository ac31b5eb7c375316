package dev.once.relay.cdc.autoconfigure;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.OnceConfigurationException;
import dev.once.relay.cdc.internal.PostgresCoordinates;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.Properties;
import java.util.Set;
import javax.sql.DataSource;
import org.springframework.boot.jdbc.autoconfigure.JdbcConnectionDetails;
import org.springframework.util.ClassUtils;

/**
 * Where the CDC relay opens its own connections (Debezium's replication connection and the leader's lock): those of
 * {@code once.outbox.relay.cdc.connection.*} when its URL is set (a direct connection past a pooler), else the same
 * database and credentials as the application's {@link DataSource}. Taken from Spring Boot's
 * {@link JdbcConnectionDetails} when there is one (Boot's own DataSource, or a service connection), else from the
 * DataSource itself when it is a HikariCP pool. Never from {@code spring.datasource.*} in the Environment, which a
 * DataSource built in code does not use. A HikariCP pool's driver properties
 * ({@code spring.datasource.hikari.data-source-properties.*}, such as {@code sslmode} or {@code sslrootcert}) join the
 * URL's parameters, where the URL does not set them, so that the relay's connections use the pool's TLS too.
 */
record ReplicationConnection(String jdbcUrl, String user, String password) {

    static ReplicationConnection of(OnceCdcRelayProperties.Connection configured, JdbcConnectionDetails details,
                                    DataSource dataSource) {
        if (!configured.url().isBlank()) {
            ReplicationConnection application = configured.username().isBlank() ? of(details, dataSource) : null;
            return new ReplicationConnection(configured.url(), application != null ? application.user()
                    : configured.username(), application != null ? application.password() : configured.password());
        }
        return of(details, dataSource);
    }

    static ReplicationConnection of(JdbcConnectionDetails details, DataSource dataSource) {
        ReplicationConnection connection = details != null && details.getJdbcUrl() != null
                ? new ReplicationConnection(details.getJdbcUrl(), details.getUsername(), details.getPassword())
                : HIKARI ? Hikari.of(dataSource) : null;
        if (connection == null) {
            throw new OnceConfigurationException("The CDC relay cannot tell which database and credentials the "
                    + "application's DataSource uses (it is neither Spring Boot's nor a HikariCP pool)", "Define a "
                    + "JdbcConnectionDetails bean with its URL, user and password, set once.outbox.relay.cdc.connection.url "
                    + "(with username and password), or set once.outbox.relay.mode=polling");
        }
        return HIKARI ? connection.withParameters(Hikari.driverProperties(dataSource)) : connection;
    }

    /** The URL with {@code parameters} it does not set yet; user and password stay apart. */
    ReplicationConnection withParameters(Properties parameters) {
        Set<String> inUrl = PostgresCoordinates.parameters(jdbcUrl).stringPropertyNames();
        StringBuilder url = new StringBuilder(jdbcUrl);
        parameters.stringPropertyNames().stream().sorted()
                .filter(name -> !inUrl.contains(name) && !name.equals("user") && !name.equals("password"))
                .forEach(name -> url.append(url.indexOf("?") < 0 ? '?' : '&')
                        .append(URLEncoder.encode(name, StandardCharsets.UTF_8)).append('=')
                        .append(URLEncoder.encode(parameters.getProperty(name), StandardCharsets.UTF_8)));
        return new ReplicationConnection(url.toString(), user, password);
    }

    private static final boolean HIKARI = ClassUtils.isPresent("com.zaxxer.hikari.HikariDataSource",
            ReplicationConnection.class.getClassLoader());

    /** Apart, so that nothing of HikariCP is loaded when the application does not have it. */
    private static final class Hikari {

        static ReplicationConnection of(DataSource dataSource) {
            HikariDataSource pool = pool(dataSource);
            return pool == null || pool.getJdbcUrl() == null ? null
                    : new ReplicationConnection(pool.getJdbcUrl(), pool.getUsername(), pool.getPassword());
        }

        /** The pool's {@code dataSourceProperties}: none when the DataSource is not a HikariCP pool. */
        static Properties driverProperties(DataSource dataSource) {
            HikariDataSource pool = pool(dataSource);
            return pool == null ? new Properties() : pool.getDataSourceProperties();
        }

        private static HikariDataSource pool(DataSource dataSource) {
            try {
                return dataSource.isWrapperFor(HikariDataSource.class) ? dataSource.unwrap(HikariDataSource.class)
                        : null;
            } catch (SQLException e) {
                return null; // a wrapper that will not say what it wraps
            }
        }
    }

    @Override
    public String toString() {
        return "ReplicationConnection[" + PostgresCoordinates.withoutParameters(jdbcUrl) + " as " + user + "]";
    }
}
