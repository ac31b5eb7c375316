package dev.once.relay.cdc.internal;

import dev.once.OnceConfigurationException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.postgresql.Driver;
import org.postgresql.PGProperty;

/**
 * Host, port and database of a {@code jdbc:postgresql://host:port/db?...} URL, which Debezium needs apart, and the
 * URL's TLS parameters, which it needs under names of its own; read as the JDBC driver reads the URL. Not API.
 *
 * @param tls the URL's {@link #TLS_PARAMETERS} as Debezium's {@code database.ssl*} properties, and {@code ssl=true}
 *            without {@code sslmode} as {@code verify-full}, as the JDBC driver reads it
 */
public record PostgresCoordinates(String host, int port, String database, Map<String, String> tls) {

    /** The JDBC driver's TLS parameters that Debezium takes as {@code database.<name>}. */
    static final List<String> TLS_PARAMETERS = List.of("sslmode", "sslrootcert", "sslcert", "sslkey", "sslpassword",
            "sslfactory");

    public static PostgresCoordinates fromJdbcUrl(String jdbcUrl) {
        Properties url = parameters(jdbcUrl);
        if (PGProperty.PG_HOST.getOrDefault(url).contains(",")) { // the driver's failover list: one host is the primary
            throw new OnceConfigurationException("The CDC relay's connection URL " + withoutParameters(jdbcUrl)
                    + " names several hosts, and Debezium's replication connection takes one", "Set once.outbox.relay"
                    + ".cdc.connection.url (with username and password) to the primary alone, by a name that follows it");
        }
        Map<String, String> tls = new LinkedHashMap<>();
        TLS_PARAMETERS.stream().filter(url::containsKey).forEach(n -> tls.put("database." + n, url.getProperty(n)));
        if (!url.containsKey("sslmode") && "true".equalsIgnoreCase(url.getProperty("ssl"))) {
            tls.put("database.sslmode", "verify-full");
        }
        return new PostgresCoordinates(PGProperty.PG_HOST.getOrDefault(url), Integer.parseInt(
                PGProperty.PG_PORT.getOrDefault(url)), PGProperty.PG_DBNAME.getOrDefault(url), Map.copyOf(tls));
    }

    /** The URL's parameters, decoded, with the driver's {@code PGHOST}, {@code PGPORT} and {@code PGDBNAME}. */
    public static Properties parameters(String jdbcUrl) {
        Properties url = jdbcUrl == null ? null : Driver.parseURL(jdbcUrl, null);
        if (url == null) {
            throw new OnceConfigurationException("The CDC relay's connection URL " + withoutParameters(jdbcUrl) + " is "
                    + "not a PostgreSQL JDBC URL", "Set once.outbox.relay.cdc.connection.url to a PostgreSQL one");
        }
        return url;
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
}
