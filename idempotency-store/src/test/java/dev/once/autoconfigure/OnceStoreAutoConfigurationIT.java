package dev.once.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.OnceDataSource;
import dev.once.idempotency.HandlerClaims;
import dev.once.idempotency.IdempotencyOperations;
import dev.once.idempotency.IdempotencyStore;
import dev.once.outbox.DomainEvents;
import dev.once.outbox.OutboxOperations;
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
import org.springframework.transaction.support.TransactionTemplate;

/** One flag per role on the database side: the idempotency side and the outbox are switched on and off apart. */
class OnceStoreAutoConfigurationIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    ApplicationContextRunner runner() {
        DataSource shared = new DelegatingDataSource(db.dataSource());
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(OnceStoreAutoConfiguration.class))
                .withBean(DataSource.class, () -> shared);
    }

    @Test
    void by_default_both_the_idempotency_side_and_the_outbox_are_there() {
        runner().run(context -> assertThat(context)
                .hasSingleBean(OnceSchema.class).hasSingleBean(HandlerClaims.class)
                .hasSingleBean(IdempotencyStore.class).hasSingleBean(IdempotencyOperations.class)
                .hasSingleBean(OutboxWriter.class).hasSingleBean(DomainEvents.class)
                .hasSingleBean(OutboxOperations.class));
    }

    @Test
    void an_outbox_only_service_switches_the_idempotency_side_off_and_still_appends_events() {
        runner().withPropertyValues("once.idempotency.enabled=false").run(context -> {
            assertThat(context).doesNotHaveBean(IdempotencyStore.class).doesNotHaveBean(IdempotencyOperations.class)
                    .hasSingleBean(OnceSchema.class).hasSingleBean(OutboxWriter.class);
            assertThat(context.getBean(DataSource.class)).as("appends still travel with the commit")
                    .isInstanceOf(OnceDataSource.class);

            DataSource dataSource = context.getBean(DataSource.class);
            OutboxWriter outbox = context.getBean(OutboxWriter.class);
            UUID id = new TransactionTemplate(new DataSourceTransactionManager(dataSource)).execute(s ->
                    outbox.append(outbox.event().tenantId("acme").actorId("alice").aggregate("order", "o-1")
                            .type("OrderPlaced", 1).payload("{}").build()));
            assertThat(new JdbcTemplate(dataSource).queryForObject(
                    "SELECT count(*) FROM outbox_event WHERE id = ?", Long.class, id)).isOne();
        });
    }

    @Test
    void a_service_that_publishes_nothing_switches_the_outbox_off_and_keeps_the_store() {
        runner().withPropertyValues("once.outbox.enabled=false").run(context -> assertThat(context)
                .hasSingleBean(IdempotencyStore.class).hasSingleBean(OnceSchema.class)
                .doesNotHaveBean(OutboxWriter.class).doesNotHaveBean(DomainEvents.class)
                .doesNotHaveBean(OutboxOperations.class));
    }

    @Test
    void with_both_off_nothing_is_created_and_the_schema_is_left_alone() {
        runner().withPropertyValues("once.idempotency.enabled=false", "once.outbox.enabled=false").run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(OnceSchema.class)
                    .doesNotHaveBean(IdempotencyStore.class).doesNotHaveBean(OutboxWriter.class)
                    .doesNotHaveBean(HandlerClaims.class);
            assertThat(context.getBean(DataSource.class)).isNotInstanceOf(OnceDataSource.class);
        });
    }
}
