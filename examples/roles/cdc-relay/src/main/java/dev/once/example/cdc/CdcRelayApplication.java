package dev.once.example.cdc;

import dev.once.outbox.OutboxWriter;
import java.util.UUID;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * A service that relays its outbox from the WAL, the default relay: {@code once-outbox-relay-cdc} with
 * {@code spring-boot-starter-jdbc} and nothing else (no Micrometer, no JPA). Its one job here: refund an order, the
 * {@code OrderRefunded} event committing with the caller's transaction.
 */
@SpringBootApplication
public class CdcRelayApplication {

    public static void main(String[] args) {
        SpringApplication.run(CdcRelayApplication.class, args);
    }

    /** Refunds: one event per refund, appended in a transaction of its own. */
    public interface Refunds {
        UUID refund(String tenant, String actor, String orderId);
    }

    @Bean
    Refunds refunds(OutboxWriter outbox, TransactionTemplate transactions) {
        return (tenant, actor, orderId) -> transactions.execute(status -> outbox.append(outbox.event()
                .tenantId(tenant).actorId(actor).aggregate("order", orderId).type("OrderRefunded", 1)
                .payloadJson("{\"order_id\":\"" + orderId + "\"}").build()));
    }
}
