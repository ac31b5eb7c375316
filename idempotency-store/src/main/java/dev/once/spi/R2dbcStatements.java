package dev.once.spi;

import org.springframework.r2dbc.core.DatabaseClient;

/**
 * Once's SQL over R2DBC: the same text constants the JDBC code runs, with their {@code ?} placeholders numbered as
 * PostgreSQL's R2DBC driver binds them ({@code $1}, {@code $2}, …), and nullable values bound with their type.
 */
public final class R2dbcStatements {

    private R2dbcStatements() {
    }

    /**
     * {@code sql} with each {@code ?} outside quoted text numbered in order. Once's statements have no other
     * {@code ?} (no JSON operators of that name), which {@link #numbered} checks by counting.
     */
    public static String numbered(String sql) {
        StringBuilder out = new StringBuilder(sql.length() + 16);
        int n = 0;
        boolean quoted = false;
        for (int i = 0; i < sql.length(); i++) {
            char c = sql.charAt(i);
            if (c == '\'') {
                quoted = !quoted;
            }
            if (c == '?' && !quoted) {
                out.append('$').append(++n);
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /** Binds {@code value} at {@code index} (from 0), or a typed null. */
    public static DatabaseClient.GenericExecuteSpec bind(DatabaseClient.GenericExecuteSpec spec, int index,
                                                         Object value, Class<?> type) {
        return value == null ? spec.bindNull(index, type) : spec.bind(index, value);
    }

    /**
     * The SQLState of the first R2DBC exception along {@code failure}'s causes, or {@code null}: how R2DBC failures
     * are recognised, by state and never by message.
     */
    public static String sqlState(Throwable failure) {
        Throwable current = failure;
        for (int depth = 0; current != null && depth < 32; depth++, current = current.getCause()) {
            if (current instanceof io.r2dbc.spi.R2dbcException r2dbc && r2dbc.getSqlState() != null) {
                return r2dbc.getSqlState();
            }
        }
        return null;
    }
}
