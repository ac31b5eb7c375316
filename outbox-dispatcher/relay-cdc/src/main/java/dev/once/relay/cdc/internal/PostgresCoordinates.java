package dev.once.relay.cdc.internal;

import java.net.URI;

/** Host, port and database of a {@code jdbc:postgresql://host:port/db?...} URL, which Debezium needs apart. Not API. */
public record PostgresCoordinates(String host, int port, String database) {

    public static PostgresCoordinates fromJdbcUrl(String jdbcUrl) {
        if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:postgresql://")) {
            throw new IllegalArgumentException("Not a PostgreSQL JDBC URL: " + jdbcUrl);
        }
        URI uri = URI.create(jdbcUrl.substring("jdbc:".length()));
        String path = uri.getPath() == null ? "" : uri.getPath();
        return new PostgresCoordinates(uri.getHost() == null ? "localhost" : uri.getHost(),
                uri.getPort() < 0 ? 5432 : uri.getPort(), path.startsWith("/") ? path.substring(1) : path);
    }
}
