package dev.once.relay.cdc.autoconfigure;

import com.zaxxer.hikari.HikariDataSource;
import dev.once.OnceConfigurationException;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.springframework.boot.jdbc.autoconfigure.JdbcConnectionDetails;
import org.springframework.util.ClassUtils;

/**
 * Where the CDC relay opens its own connections (Debezium's replication connection and the leader's lock): the same
 * database and credentials as the application's {@link DataSource}. Taken from Spring Boot's
 * {@link JdbcConnectionDetails} when there is one (Boot's own DataSource, or a service connection), else from the
 * DataSource itself when it is a HikariCP pool. Never from {@code spring.datasource.*} in the Environment, which a
 * DataSource built in code does not use.
 */
record ReplicationConnection(String jdbcUrl, String user, String password) {

    static ReplicationConnection of(JdbcConnectionDetails details, DataSource dataSource) {
        if (details != null && details.getJdbcUrl() != null) {
            return new ReplicationConnection(details.getJdbcUrl(), details.getUsername(), details.getPassword());
        }
        ReplicationConnection pool = HIKARI ? Hikari.of(dataSource) : null;
        if (pool != null) {
            return pool;
        }
        throw new OnceConfigurationException("The CDC relay cannot tell which database and credentials the "
                + "application's DataSource uses (it is neither Spring Boot's nor a HikariCP pool)", "Define a "
                + "JdbcConnectionDetails bean with its URL, user and password, or set once.outbox.relay.mode=polling");
    }

    private static final boolean HIKARI = ClassUtils.isPresent("com.zaxxer.hikari.HikariDataSource",
            ReplicationConnection.class.getClassLoader());

    /** Apart, so that nothing of HikariCP is loaded when the application does not have it. */
    private static final class Hikari {

        static ReplicationConnection of(DataSource dataSource) {
            try {
                if (!dataSource.isWrapperFor(HikariDataSource.class)) {
                    return null;
                }
                HikariDataSource pool = dataSource.unwrap(HikariDataSource.class);
                return pool.getJdbcUrl() == null ? null
                        : new ReplicationConnection(pool.getJdbcUrl(), pool.getUsername(), pool.getPassword());
            } catch (SQLException e) {
                return null; // a wrapper that will not say what it wraps
            }
        }
    }

    @Override
    public String toString() {
        return "ReplicationConnection[" + jdbcUrl + " as " + user + "]"; // never the password
    }
}
