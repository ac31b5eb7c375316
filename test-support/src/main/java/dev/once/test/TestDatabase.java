package dev.once.test;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A schema of its own on the shared {@link TestPostgres} server, for one test class.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final TestDatabase db = TestDatabase.create().sessionTimeZone("Asia/Kathmandu");
 * }</pre>
 *
 * The schema is created before the class's first test and dropped after its last, so classes never see each
 * other's rows. {@link #dataSource()} is a pooled DataSource whose connections resolve unqualified names into it.
 */
public final class TestDatabase implements BeforeAllCallback, AfterAllCallback, AutoCloseable {

    private String timeZone;
    private int poolSize = 40;
    private String schema;
    private HikariDataSource dataSource;

    private TestDatabase() {
    }

    public static TestDatabase create() {
        return new TestDatabase();
    }

    /** Sets the PostgreSQL session time zone of every pooled connection, to shake out clock and time-zone bugs. */
    public TestDatabase sessionTimeZone(String zone) {
        this.timeZone = zone;
        return this;
    }

    public TestDatabase poolSize(int size) {
        this.poolSize = size;
        return this;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws SQLException {
        start(context.getRequiredTestClass().getSimpleName());
    }

    @Override
    public void afterAll(ExtensionContext context) throws SQLException {
        close();
    }

    /**
     * Creates the schema now, named after {@code testName}: for test engines without Jupiter's extensions (jqwik).
     * {@link #close()} drops it.
     */
    public TestDatabase start(String testName) throws SQLException {
        String prefix = testName.toLowerCase(Locale.ROOT);
        schema = "t_" + prefix.substring(0, Math.min(prefix.length(), 40)) + "_"
                + Integer.toHexString(ThreadLocalRandom.current().nextInt(1 << 20, 1 << 24));
        execute("CREATE SCHEMA " + schema);
        dataSource = newDataSource(schema, poolSize, timeZone);
        return this;
    }

    /** Closes the pool and drops the schema. */
    @Override
    public void close() throws SQLException {
        if (dataSource != null) {
            dataSource.close();
        }
        execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }

    public DataSource dataSource() {
        return dataSource;
    }

    public String schema() {
        return schema;
    }

    public PostgresServer server() {
        return TestPostgres.server();
    }

    /** The JDBC URL that points into this class's schema. */
    public String jdbcUrl() {
        return server().jdbcUrlForSchema(schema);
    }

    /**
     * Spring Boot's {@code spring.datasource.url}, {@code .username} and {@code .password} for this class's schema, to
     * hand to an application under test (e.g. {@code db.springProperties().forEach((k, v) -> registry.add(k, () -> v))}
     * in a {@code @DynamicPropertySource}).
     */
    public java.util.Map<String, String> springProperties() {
        return java.util.Map.of("spring.datasource.url", jdbcUrl(), "spring.datasource.username", server().username(),
                "spring.datasource.password", server().password());
    }

    /** A new pool into {@code schema} on the test server; the caller closes it. */
    public static HikariDataSource newDataSource(String schema, int poolSize, String timeZone) {
        PostgresServer server = TestPostgres.server();
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(server.jdbcUrlForSchema(schema));
        config.setUsername(server.username());
        config.setPassword(server.password());
        config.setMaximumPoolSize(poolSize);
        config.setMinimumIdle(0);
        config.setPoolName("test-" + schema);
        if (timeZone != null) {
            config.setConnectionInitSql("SET TIME ZONE '" + timeZone + "'");
        }
        return new HikariDataSource(config);
    }

    private static void execute(String sql) throws SQLException {
        PostgresServer server = TestPostgres.server();
        try (Connection c = DriverManager.getConnection(server.jdbcUrl(), server.username(), server.password());
             Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
