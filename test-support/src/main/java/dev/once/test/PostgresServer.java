package dev.once.test;

/**
 * Where a real PostgreSQL server for tests lives: a JDBC URL to its maintenance database plus credentials.
 * Obtain it from {@link TestPostgres#server()}; one server is shared by every test in a JVM.
 *
 * @param source how it was found: {@code env}, {@code testcontainers} or {@code embedded}
 */
public record PostgresServer(String jdbcUrl, String username, String password, String source) {

    /** The same server's URL with {@code currentSchema} set, so unqualified names resolve into {@code schema}. */
    public String jdbcUrlForSchema(String schema) {
        return jdbcUrl + (jdbcUrl.contains("?") ? "&" : "?") + "currentSchema=" + schema;
    }

    @Override
    public String toString() {
        return "PostgresServer[" + source + " " + jdbcUrl + " as " + username + "]";
    }
}
