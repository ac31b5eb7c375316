package dev.once.benchmarks.guardflux;

import dev.once.guard.MutationContext;
import dev.once.guard.web.Idempotent;
import dev.once.outbox.OutboxEvent;
import dev.once.outbox.OutboxWriter;
import dev.once.outbox.R2dbcOutboxWriter;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryOptions;
import java.net.URI;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.jdbc.DataSourceBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.reactive.TransactionalOperator;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * {@link dev.once.benchmarks.guard.BenchApp}'s endpoint on WebFlux, with once.idempotency.reactive.transactions as
 * started: unguarded (the business row and the outbox row in one transaction, JDBC on the guard's own thread pool,
 * or R2DBC) and {@link Idempotent} (the same writes inside the guard). Everything else is identical.
 */
@SpringBootApplication
public class ReactiveBenchApp {

    static final String INSERT_ACCOUNT = "INSERT INTO bench_account (id, tenant_id, name) VALUES (?, ?, ?)";

    @Bean
    SecurityWebFilterChain api(ServerHttpSecurity http) {
        return http.authorizeExchange(a -> a.anyExchange().authenticated())
                .httpBasic(org.springframework.security.config.Customizer.withDefaults())
                .csrf(c -> c.disable()).build();
    }

    @Bean
    MapReactiveUserDetailsService users() {
        return new MapReactiveUserDetailsService(User.withUsername("bench").password("bench-pass")
                .authorities("TENANT_acme").build());
    }

    /** Plain-text demo passwords: a benchmark must not measure BCrypt. */
    @Bean
    @SuppressWarnings("deprecation")
    org.springframework.security.crypto.password.PasswordEncoder passwordEncoder() {
        return org.springframework.security.crypto.password.NoOpPasswordEncoder.getInstance();
    }

    public record CreateAccount(String name) {
    }

    /** How a request's writes are made in this mode. */
    interface Writes {
        Mono<Void> unguarded(UUID id, CreateAccount body);

        Mono<Void> guarded(UUID id, CreateAccount body, MutationContext ctx);
    }

    @Bean
    @ConditionalOnProperty(name = "once.idempotency.reactive.transactions", havingValue = "jdbc", matchIfMissing = true)
    Writes jdbcWrites(DataSource dataSource, PlatformTransactionManager transactions, OutboxWriter outbox,
                      @Qualifier("onceGuardJdbcScheduler") Scheduler scheduler) {
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        TransactionTemplate tx = new TransactionTemplate(transactions);
        return new Writes() {
            @Override
            public Mono<Void> unguarded(UUID id, CreateAccount body) {
                return Mono.<Void>fromRunnable(() -> tx.executeWithoutResult(s -> {
                    jdbc.update(INSERT_ACCOUNT, id, "acme", body.name());
                    outbox.append(event(id, body));
                })).subscribeOn(scheduler); // the same pool the guard runs JDBC work on
            }

            @Override
            public Mono<Void> guarded(UUID id, CreateAccount body, MutationContext ctx) {
                return Mono.fromRunnable(() -> {
                    jdbc.update(INSERT_ACCOUNT, id, "acme", body.name());
                    ctx.append(event(id, body));
                });
            }
        };
    }

    /** R2DBC work, and the DataSource and JDBC transactions of Once's store, which Boot no longer creates. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(name = "once.idempotency.reactive.transactions", havingValue = "r2dbc")
    static class R2dbc {

        @Bean
        DataSource dataSource(@Value("${spring.datasource.url}") String url,
                              @Value("${spring.datasource.username}") String user,
                              @Value("${spring.datasource.password}") String password,
                              @Value("${spring.datasource.hikari.maximum-pool-size}") int size) {
            com.zaxxer.hikari.HikariDataSource ds = DataSourceBuilder.create().type(com.zaxxer.hikari.HikariDataSource.class)
                    .url(url).username(user).password(password).build();
            ds.setMaximumPoolSize(size);
            return ds;
        }

        @Bean
        JdbcTransactionManager transactionManager(DataSource dataSource) {
            return new JdbcTransactionManager(dataSource);
        }

        @Bean
        ConnectionFactory connectionFactory(@Value("${spring.datasource.url}") String url,
                                            @Value("${spring.datasource.username}") String user,
                                            @Value("${spring.datasource.password}") String password,
                                            @Value("${spring.datasource.hikari.maximum-pool-size}") int size) {
            URI jdbc = URI.create(url.substring("jdbc:".length()));
            String schema = url.substring(url.indexOf("currentSchema=") + "currentSchema=".length()).split("&")[0];
            ConnectionFactory single = ConnectionFactories.get(ConnectionFactoryOptions.builder()
                    .option(ConnectionFactoryOptions.DRIVER, "postgresql")
                    .option(ConnectionFactoryOptions.HOST, jdbc.getHost())
                    .option(ConnectionFactoryOptions.PORT, jdbc.getPort())
                    .option(ConnectionFactoryOptions.DATABASE, jdbc.getPath().substring(1))
                    .option(ConnectionFactoryOptions.USER, user)
                    .option(ConnectionFactoryOptions.PASSWORD, password)
                    .option(io.r2dbc.spi.Option.valueOf("schema"), schema)
                    .build());
            return new io.r2dbc.pool.ConnectionPool(io.r2dbc.pool.ConnectionPoolConfiguration.builder(single)
                    .initialSize(size).maxSize(size).build()); // as many connections as the JDBC pool
        }

        @Bean
        R2dbcTransactionManager r2dbcTransactionManager(ConnectionFactory connections) {
            return new R2dbcTransactionManager(connections);
        }

        @Bean
        Writes r2dbcWrites(ConnectionFactory connections, R2dbcTransactionManager transactions) {
            DatabaseClient client = DatabaseClient.create(connections);
            R2dbcOutboxWriter outbox = R2dbcOutboxWriter.create(client);
            TransactionalOperator tx = TransactionalOperator.create(transactions);
            return new Writes() {
                @Override
                public Mono<Void> unguarded(UUID id, CreateAccount body) {
                    return tx.transactional(insert(client, id, body).then(outbox.append(event(id, body))).then());
                }

                @Override
                public Mono<Void> guarded(UUID id, CreateAccount body, MutationContext ctx) {
                    return insert(client, id, body).then(Mono.fromRunnable(() -> ctx.append(event(id, body))));
                }
            };
        }

        private static Mono<Void> insert(DatabaseClient client, UUID id, CreateAccount body) {
            return client.sql("INSERT INTO bench_account (id, tenant_id, name) VALUES ($1, $2, $3)")
                    .bind(0, id).bind(1, "acme").bind(2, body.name()).then();
        }
    }

    @RestController
    static class Accounts {

        private final Writes writes;

        Accounts(Writes writes) {
            this.writes = writes;
        }

        @PostMapping("/unguarded/accounts")
        public Mono<ResponseEntity<Map<String, Object>>> unguarded(@RequestBody CreateAccount body) {
            UUID id = UUID.randomUUID();
            return writes.unguarded(id, body).then(Mono.fromSupplier(() -> created(id, body)));
        }

        @Idempotent
        @PostMapping("/guarded/accounts")
        public Mono<ResponseEntity<Map<String, Object>>> guarded(@RequestBody CreateAccount body, MutationContext ctx) {
            UUID id = UUID.randomUUID();
            return writes.guarded(id, body, ctx).then(Mono.fromSupplier(() -> created(id, body)));
        }

        private static ResponseEntity<Map<String, Object>> created(UUID id, CreateAccount body) {
            return ResponseEntity.created(URI.create("/accounts/" + id))
                    .body(Map.of("id", id.toString(), "name", body.name(), "tenant_id", "acme"));
        }
    }

    private static OutboxEvent event(UUID id, CreateAccount body) {
        return OutboxEvent.builder().tenantId("acme").actorId("bench").aggregate("account", id.toString())
                .type("AccountCreated", 1).payloadJson("{\"id\":\"" + id + "\",\"name\":\"" + body.name() + "\"}").build();
    }
}
