package dev.once.idempotency;

import dev.once.OnceException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;

/**
 * The number of each handler route in {@code once_handler_route}, which a claim row carries instead of the route's
 * text. A route's number never changes once given, so it is looked up once per route and instance, on a connection of
 * its own that commits at once: never inside a caller's transaction, whose rollback would take the number back.
 */
final class HandlerRoutes {

    /** The route's number, given now or earlier; no row when another session gave it after this statement began. */
    static final String RESOLVE = """
            WITH given AS (
                INSERT INTO once_handler_route (route) VALUES (?) ON CONFLICT ON CONSTRAINT once_handler_route_uk DO NOTHING
                RETURNING id)
            SELECT id FROM given
            UNION ALL
            SELECT id FROM once_handler_route WHERE route = ?
            """;

    private final DataSource dataSource;
    private final Map<String, Integer> ids = new ConcurrentHashMap<>();

    HandlerRoutes(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    int id(Route route) {
        Integer id = ids.get(route.value());
        if (id == null) {
            id = resolve(route.value());
            ids.put(route.value(), id);
        }
        return id;
    }

    private int resolve(String route) {
        try (Connection connection = dataSource.getConnection();
             PreparedStatement statement = connection.prepareStatement(RESOLVE)) {
            connection.setAutoCommit(true);
            statement.setString(1, route);
            statement.setString(2, route);
            for (int attempt = 0; attempt < 3; attempt++) {
                try (ResultSet rs = statement.executeQuery()) {
                    if (rs.next()) {
                        return rs.getInt(1);
                    }
                }
            }
            throw new OnceException("Handler route " + route + " got no number after 3 attempts");
        } catch (SQLException e) {
            throw new OnceException("Could not number handler route " + route + ": " + e.getMessage(), e);
        }
    }
}
