package dev.once.example.consumer;

import dev.once.dispatch.HandlerRegistration;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * A service that only consumes: one TRANSACTIONAL handler keeps a projection of shipped orders, exactly once per
 * event, on {@code once-dispatcher} with {@code spring-boot-starter-jdbc} and nothing else (no Debezium, no JPA of its
 * own, no web server).
 */
@SpringBootApplication
public class ConsumerOnlyApplication {

    public static void main(String[] args) {
        SpringApplication.run(ConsumerOnlyApplication.class, args);
    }

    @Bean
    HandlerRegistration shippedOrders(JdbcTemplate jdbc) {
        return HandlerRegistration.transactional("OrderShipped", 1, "shipped-orders", event -> jdbc.update(
                "INSERT INTO shipped_order (event_id, tenant_id, payload) VALUES (?, ?, ?)", event.eventId(),
                event.tenantId(), event.payloadJson()));
    }
}
