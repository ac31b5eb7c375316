package dev.once.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.outbox.OutboxEvent;
import dev.once.outbox.OutboxMapping;
import dev.once.outbox.OutboxWriter;
import dev.once.test.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.core.JsonGenerator;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.SerializationContext;
import tools.jackson.databind.ValueSerializer;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.module.SimpleModule;

/**
 * Object payloads are serialised with the application's JsonMapper (its naming strategy and its modules), through the
 * writer's builders and for domain events alike; Once's own fingerprinting does not depend on it.
 */
class ApplicationJsonMapperIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    /** An amount the application writes as text with its currency, by a serializer of its own module. */
    record Money(long cents, String currency) {
    }

    @OutboxMapping(aggregate = "order", aggregateId = "orderId", type = "OrderPlaced", version = 1)
    record OrderPlaced(UUID orderId, String tenantId, String actorId, Money amountDue) {
    }

    @Configuration(proxyBeanMethods = false)
    static class Application {

        @Bean
        PlatformTransactionManager transactionManager(DataSource dataSource) {
            return new DataSourceTransactionManager(dataSource);
        }

        /** What Spring Boot builds from spring.jackson.* and the application's modules. */
        @Bean
        JsonMapper jsonMapper() {
            SimpleModule money = new SimpleModule().addSerializer(Money.class, new ValueSerializer<Money>() {
                @Override
                public void serialize(Money value, JsonGenerator gen, SerializationContext context) {
                    gen.writeString(value.cents() / 100 + "." + String.format("%02d", value.cents() % 100) + " "
                            + value.currency());
                }
            });
            return JsonMapper.builder().propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE).addModule(money)
                    .build();
        }
    }

    @Test
    void the_writers_builders_and_domain_events_use_the_applications_naming_strategy_and_modules() {
        DataSource shared = new DelegatingDataSource(db.dataSource());
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(OnceStoreAutoConfiguration.class))
                .withBean(DataSource.class, () -> shared)
                .withUserConfiguration(Application.class)
                .run(context -> {
                    OutboxWriter outbox = context.getBean(OutboxWriter.class);
                    TransactionTemplate tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
                    UUID written = UUID.randomUUID();
                    UUID published = UUID.randomUUID();
                    tx.executeWithoutResult(s -> outbox.append(outbox.event().tenantId("acme").actorId("alice")
                            .aggregate("order", written.toString()).type("OrderPlaced", 1)
                            .payload(new OrderPlaced(written, "acme", "alice", new Money(1250, "EUR"))).build()));
                    tx.executeWithoutResult(s -> context.publishEvent(new OrderPlaced(published, "acme", "alice",
                            new Money(99, "CHF"))));

                    assertThat(payload(written)).isEqualTo("{\"order_id\":\"" + written + "\",\"tenant_id\":\"acme\","
                            + "\"actor_id\":\"alice\",\"amount_due\":\"12.50 EUR\"}");
                    assertThat(payload(published)).isEqualTo("{\"order_id\":\"" + published + "\",\"tenant_id\":"
                            + "\"acme\",\"actor_id\":\"alice\",\"amount_due\":\"0.99 CHF\"}");
                });
        assertThat(new String(OutboxEvent.builder().tenantId("acme").actorId("alice").aggregate("order", "o-1")
                .type("OrderPlaced", 1).payload(new Money(5, "EUR")).build().payload(), StandardCharsets.UTF_8))
                .as("the static builder keeps Jackson's defaults").isEqualTo("{\"cents\":5,\"currency\":\"EUR\"}");
    }

    private static String payload(UUID aggregateId) {
        return new String(new JdbcTemplate(db.dataSource()).queryForObject(
                "SELECT payload FROM outbox_event WHERE aggregate_id = ?", byte[].class, aggregateId.toString()),
                StandardCharsets.UTF_8);
    }
}
