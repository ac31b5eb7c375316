package dev.once.relay.cdc.internal;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Host, port and database of a {@code jdbc:postgresql://host:port/db?...} URL, which Debezium needs apart, and the
 * URL's TLS parameters, which it needs under names of its own. Not API.
 *
 * @param tls the URL's TLS parameters as Debezium's {@code database.ssl*} properties: {@code sslmode},
 *            {@code sslrootcert}, {@code sslcert}, {@code sslkey}, {@code sslpassword} and {@code sslfactory}, and
 *            {@code ssl=true} without {@code sslmode} as {@code verify-full}, as the JDBC driver reads it
 */
public record PostgresCoordinates(String host, int port, String database, Map<String, String> tls) {

    /** The JDBC driver's TLS parameters that Debezium takes as {@code database.<name>}. */
    static final List<String> TLS_PARAMETERS = List.of("sslmode", "sslrootcert", "sslcert", "sslkey", "sslpassword",
            "sslfactory");

    public static PostgresCoordinates fromJdbcUrl(String jdbcUrl) {
        if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:postgresql://")) {
            throw new IllegalArgumentException("Not a PostgreSQL JDBC URL: " + withoutParameters(jdbcUrl));
        }
        URI uri = URI.create(jdbcUrl.substring("jdbc:".length()));
        String path = uri.getPath() == null ? "" : uri.getPath();
        Map<String, String> parameters = parameters(jdbcUrl);
        Map<String, String> tls = new LinkedHashMap<>();
        TLS_PARAMETERS.stream().filter(parameters::containsKey)
                .forEach(name -> tls.put("database." + name, parameters.get(name)));
        if (!parameters.containsKey("sslmode") && "true".equalsIgnoreCase(parameters.get("ssl"))) {
            tls.put("database.sslmode", "verify-full");
        }
        return new PostgresCoordinates(uri.getHost() == null ? "localhost" : uri.getHost(),
                uri.getPort() < 0 ? 5432 : uri.getPort(), path.startsWith("/") ? path.substring(1) : path, Map.copyOf(tls));
    }

    /** The URL's parameters ({@code ?name=value&...}), decoded, in their order. */
    public static Map<String, String> parameters(String jdbcUrl) {
        Map<String, String> parameters = new LinkedHashMap<>();
        int query = jdbcUrl.indexOf('?');
        if (query >= 0) {
            for (String pair : jdbcUrl.substring(query + 1).split("&")) {
                int eq = pair.indexOf('=');
                if (eq > 0) {
                    parameters.put(decode(pair.substring(0, eq)), decode(pair.substring(eq + 1)));
                }
            }
        }
        return parameters;
    }

    /** The URL to print: without its parameters, which may carry a password ({@code password}, {@code sslpassword}). */
    public static String withoutParameters(String jdbcUrl) {
        return jdbcUrl == null ? null : jdbcUrl.replaceFirst("\\?.*", "");
    }

    /** Never the TLS parameters: {@code sslpassword} is a secret. */
    @Override
    public String toString() {
        return host + ":" + port + "/" + database;
    }

    private static String decode(String part) {
        return URLDecoder.decode(part, StandardCharsets.UTF_8);
    }
}
