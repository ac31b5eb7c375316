package dev.once.connect;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The Debezium connector's database role as docs/SCALING.md grants it: LOGIN and REPLICATION, USAGE on the outbox's
 * schema and SELECT on {@code outbox_event}; nothing it could write with. Only a superuser creates a role with
 * REPLICATION (PostgreSQL 15): against the embedded server the tests create it; against a server of the environment
 * it must exist ({@code .ci/run} creates it), named by {@value #USER_ENV} and {@value #PASSWORD_ENV}.
 */
record ConnectorRole(String user, String password) {

    static final String USER_ENV = "ONCE_TEST_CONNECTOR_USER";
    static final String PASSWORD_ENV = "ONCE_TEST_CONNECTOR_PASSWORD";

    static final String CREATE = """
            DO $$ BEGIN
              IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '%1$s') THEN
                CREATE ROLE %1$s LOGIN REPLICATION PASSWORD '%2$s';
              END IF;
            END $$
            """;

    /** The role, granted what SCALING lists on {@code schema}'s outbox. */
    static ConnectorRole granted(JdbcTemplate jdbc, String schema) {
        ConnectorRole role = new ConnectorRole(System.getenv().getOrDefault(USER_ENV, "once_connector"),
                System.getenv().getOrDefault(PASSWORD_ENV, "once_connector"));
        if (Boolean.TRUE.equals(jdbc.queryForObject("SELECT rolsuper FROM pg_roles WHERE rolname = current_user",
                Boolean.class))) {
            jdbc.execute(CREATE.formatted(role.user(), role.password()));
        }
        if (!Boolean.TRUE.equals(jdbc.queryForObject("SELECT bool_or(rolreplication) FROM pg_roles WHERE rolname = ?",
                Boolean.class, role.user()))) {
            throw new IllegalStateException("The connector's role " + role.user() + " does not exist with REPLICATION, "
                    + "and " + jdbc.queryForObject("SELECT current_user", String.class) + " may not create it: create "
                    + "it as a superuser (CREATE ROLE " + role.user() + " LOGIN REPLICATION PASSWORD '...') and name it "
                    + "in " + USER_ENV + " and " + PASSWORD_ENV);
        }
        jdbc.execute("GRANT USAGE ON SCHEMA " + schema + " TO " + role.user() + "; GRANT SELECT ON " + schema
                + ".outbox_event TO " + role.user());
        return role;
    }
}
