package dev.once.guard.reactiveapp;

import dev.once.guard.app.Probe;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryOptions;
import java.net.URI;
import javax.sql.DataSource;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.jdbc.DataSourceBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;

/**
 * The guard's test service on WebFlux: the routes of {@link dev.once.guard.app.GuardTestApplication}, annotated and
 * functional, over JDBC work (once.idempotency.reactive.transactions=jdbc) or R2DBC work (=r2dbc).
 */
@SpringBootApplication
@Import(Probe.class)
public class ReactiveGuardTestApplication {

    @Bean
    SecurityWebFilterChain api(ServerHttpSecurity http) {
        return http.authorizeExchange(a -> a.anyExchange().authenticated())
                .httpBasic(org.springframework.security.config.Customizer.withDefaults())
                .csrf(c -> c.disable())
                .build();
    }

    @Bean
    MapReactiveUserDetailsService users() {
        return new MapReactiveUserDetailsService(user("alice", "TENANT_acme"), user("bob", "TENANT_acme"),
                user("carol", "TENANT_globex"));
    }

    private static org.springframework.security.core.userdetails.UserDetails user(String name, String tenant) {
        return User.withUsername(name).password(name + "-pass").authorities(tenant).build();
    }

    @Bean
    @SuppressWarnings("deprecation")
    org.springframework.security.crypto.password.PasswordEncoder passwordEncoder() {
        return org.springframework.security.crypto.password.NoOpPasswordEncoder.getInstance();
    }

    @Bean
    io.micrometer.core.instrument.MeterRegistry meterRegistry() {
        return new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    }

    @Bean
    ApplicationRunner accountTable(DataSource dataSource) {
        return args -> {
            JdbcTemplate jdbc = new JdbcTemplate(dataSource);
            jdbc.execute("CREATE TABLE IF NOT EXISTS account (id uuid PRIMARY KEY, tenant_id text NOT NULL,"
                    + " name text NOT NULL, email text)");
            jdbc.execute("CREATE TABLE IF NOT EXISTS guard_document (id uuid PRIMARY KEY, tenant_id text NOT NULL,"
                    + " body jsonb NOT NULL)");
        };
    }

    @Bean
    @ConditionalOnProperty(name = "once.idempotency.reactive.transactions", havingValue = "jdbc", matchIfMissing = true)
    Accounts jdbcAccounts(DataSource dataSource) {
        return Accounts.jdbc(new JdbcTemplate(dataSource));
    }

    /**
     * R2DBC work: the connection factory and its transaction manager, and the DataSource and JDBC transaction manager
     * of Once's store, which Spring Boot does not create once a ConnectionFactory bean and another transaction manager
     * exist.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(name = "once.idempotency.reactive.transactions", havingValue = "r2dbc")
    static class R2dbc {

        @Bean
        DataSource dataSource(@Value("${spring.datasource.url}") String url,
                              @Value("${spring.datasource.username}") String user,
                              @Value("${spring.datasource.password}") String password) {
            return DataSourceBuilder.create().url(url).username(user).password(password).build();
        }

        @Bean
        ConnectionFactory connectionFactory(@Value("${spring.datasource.url}") String url,
                                            @Value("${spring.datasource.username}") String user,
                                            @Value("${spring.datasource.password}") String password) {
            URI jdbc = URI.create(url.substring("jdbc:".length()));
            String schema = url.substring(url.indexOf("currentSchema=") + "currentSchema=".length()).split("&")[0];
            return ConnectionFactories.get(ConnectionFactoryOptions.builder()
                    .option(ConnectionFactoryOptions.DRIVER, "postgresql")
                    .option(ConnectionFactoryOptions.HOST, jdbc.getHost())
                    .option(ConnectionFactoryOptions.PORT, jdbc.getPort())
                    .option(ConnectionFactoryOptions.DATABASE, jdbc.getPath().substring(1))
                    .option(ConnectionFactoryOptions.USER, user)
                    .option(ConnectionFactoryOptions.PASSWORD, password)
                    .option(io.r2dbc.spi.Option.valueOf("schema"), schema)
                    .build());
        }

        /** The JDBC transactions of Once's store: Spring Boot backs off its own once the R2DBC one exists. */
        @Bean
        org.springframework.jdbc.support.JdbcTransactionManager transactionManager(DataSource dataSource) {
            return new org.springframework.jdbc.support.JdbcTransactionManager(dataSource);
        }

        @Bean
        R2dbcTransactionManager r2dbcTransactionManager(ConnectionFactory connections) {
            return new R2dbcTransactionManager(connections);
        }

        @Bean
        Accounts r2dbcAccounts(ConnectionFactory connections) {
            return Accounts.r2dbc(org.springframework.r2dbc.core.DatabaseClient.create(connections));
        }
    }
}
