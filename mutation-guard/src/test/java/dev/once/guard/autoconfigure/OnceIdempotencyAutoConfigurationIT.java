package dev.once.guard.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.OnceDataSource;
import dev.once.autoconfigure.OnceStoreAutoConfiguration;
import dev.once.guard.FailureMapper;
import dev.once.guard.IdempotencyMutationGuard;
import dev.once.idempotency.IdempotencyStore;
import dev.once.outbox.OutboxEvent;
import dev.once.outbox.OutboxWriter;
import dev.once.test.TestDatabase;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.jta.JtaTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** The autoconfiguration creates the schema and the beans, and backs off for beans the application defines. */
class OnceIdempotencyAutoConfigurationIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    private ApplicationContextRunner runner() {
        DataSource shared = new DelegatingDataSource(db.dataSource()); // the context must not close the class's pool
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(OnceStoreAutoConfiguration.class,
                        OnceIdempotencyAutoConfiguration.class))
                .withBean(DataSource.class, () -> shared)
                .withUserConfiguration(Transactions.class);
    }

    /** The transaction manager over the DataSource bean, as Spring Boot's own autoconfiguration makes it. */
    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    static class Transactions {
        @org.springframework.context.annotation.Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }
    }

    @Test
    void creates_the_schema_store_outbox_writer_and_guard() {
        runner().run(context -> {
            assertThat(context).hasSingleBean(IdempotencyStore.class).hasSingleBean(OutboxWriter.class)
                    .hasSingleBean(IdempotencyMutationGuard.class).hasSingleBean(FailureMapper.class);
            assertThat(context.getBean(FailureMapper.class)).isSameAs(FailureMapper.INTERNAL_ERROR);
            assertThat(new JdbcTemplate(db.dataSource()).queryForObject(
                    "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"
                            + " AND table_name IN ('idempotency_record', 'outbox_event')", Long.class)).isEqualTo(2);
        });
    }

    @Test
    void the_data_source_sends_onces_end_of_transaction_writes_with_the_commit_unless_switched_off() {
        runner().run(context -> {
            assertThat(context.getBean(DataSource.class)).isInstanceOf(OnceDataSource.class);
            JdbcTemplate jdbc = new JdbcTemplate(context.getBean(DataSource.class));
            UUID event = new TransactionTemplate(context.getBean(PlatformTransactionManager.class)).execute(s -> {
                UUID id = context.getBean(OutboxWriter.class).append(OutboxEvent.builder().tenantId("acme")
                        .actorId("alice").aggregate("account", "a-1").type("AccountCreated", 1).payloadJson("{}").build());
                assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE id = ?", Long.class, id))
                        .as("deferred to the commit").isZero();
                return id;
            });
            assertThat(jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE id = ?", Long.class, event))
                    .isEqualTo(1);
        });
        runner().withPropertyValues("once.idempotency.pipelined-commit=false").run(context ->
                assertThat(context.getBean(DataSource.class)).isNotInstanceOf(OnceDataSource.class));
        // under JTA a commit never goes through Connection.commit: nothing may be deferred to it
        runner().withBean("jta", JtaTransactionManager.class, JtaTransactionManager::new,
                        definition -> {
                            definition.setLazyInit(true);
                            definition.setAutowireCandidate(false);
                        })
                .run(context -> assertThat(context.getBean(DataSource.class)).isNotInstanceOf(OnceDataSource.class));
    }

    @Test
    void backs_off_for_the_applications_own_beans() {
        FailureMapper own = failure -> FailureMapper.INTERNAL_ERROR.toResponse(failure);
        runner().withBean(FailureMapper.class, () -> own).run(context ->
                assertThat(context.getBean(FailureMapper.class)).isSameAs(own));
    }

    @Test
    void can_be_switched_off() {
        runner().withPropertyValues("once.idempotency.enabled=false").run(context ->
                assertThat(context).doesNotHaveBean(IdempotencyStore.class).doesNotHaveBean(IdempotencyMutationGuard.class));
    }

    /** A route that only a Spring MVC request could guard. */
    static class Transfers {
        @dev.once.guard.web.Idempotent
        public org.springframework.http.ResponseEntity<String> transfer() {
            return org.springframework.http.ResponseEntity.ok("moved");
        }
    }

    @Test
    void an_idempotent_method_in_an_application_without_a_web_server_stops_startup_naming_the_fix() {
        runner().withBean(Transfers.class).run(context -> assertThat(
                org.springframework.core.NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                .isInstanceOf(dev.once.OnceConfigurationException.class)
                .hasMessageContaining("@Idempotent on Transfers.transfer cannot be guarded: this application has no "
                        + "web server")
                .hasMessageContaining("IdempotencyMutationGuard.run"));
        runner().run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void on_webflux_an_idempotent_method_that_does_not_return_a_mono_stops_startup_naming_the_fix() {
        new org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(OnceStoreAutoConfiguration.class,
                        OnceIdempotencyAutoConfiguration.class,
                        org.springframework.boot.autoconfigure.aop.AopAutoConfiguration.class))
                .withBean(DataSource.class, () -> new DelegatingDataSource(db.dataSource()))
                .withUserConfiguration(Transactions.class).withBean(Transfers.class)
                .run(context -> assertThat(org.springframework.core.NestedExceptionUtils.getMostSpecificCause(
                        context.getStartupFailure())).hasMessageContaining("@Idempotent method Transfers.transfer must "
                        + "return Mono<ResponseEntity<?>> on WebFlux"));
    }

    record TransferMade(String transferId, long amountCents) {
    }

    @Test
    void a_guarded_handlers_event_builder_serialises_with_the_applications_json_mapper() {
        tools.jackson.databind.json.JsonMapper snakeCase = tools.jackson.databind.json.JsonMapper.builder()
                .propertyNamingStrategy(tools.jackson.databind.PropertyNamingStrategies.SNAKE_CASE).build();
        runner().withBean(tools.jackson.databind.json.JsonMapper.class, () -> snakeCase).run(context -> {
            IdempotencyMutationGuard guard = context.getBean(IdempotencyMutationGuard.class);
            String key = "k-" + java.util.UUID.randomUUID();
            guard.run(dev.once.guard.MutationRequest.of(dev.once.idempotency.IdempotencyScope.of("acme", "alice",
                            dev.once.idempotency.Route.http("POST", "/transfers"), key), "v1:h"),
                    dev.once.guard.IdempotencyPolicy.ofDefaults(), once -> {
                        once.append(once.event("transfer", key, "TransferMade", 1)
                                .payload(new TransferMade(key, 1250)).build());
                        return dev.once.idempotency.StoredResponse.of(201, "application/json", "{}");
                    });
            assertThat(new String(new org.springframework.jdbc.core.JdbcTemplate(db.dataSource()).queryForObject(
                    "SELECT payload FROM outbox_event WHERE aggregate_id = ?", byte[].class, key),
                    java.nio.charset.StandardCharsets.UTF_8))
                    .isEqualTo("{\"transfer_id\":\"" + key + "\",\"amount_cents\":1250}");
        });
    }
}
