package dev.once.example.relay;

import dev.once.outbox.OutboxEvent;
import dev.once.outbox.OutboxWriter;
import java.util.UUID;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Ships an order: the {@code OrderShipped} event commits with the caller's transaction, and the relay publishes it. */
@Service
public class Shipments {

    private final OutboxWriter outbox;

    public Shipments(OutboxWriter outbox) {
        this.outbox = outbox;
    }

    @Transactional
    public UUID ship(String tenant, String actor, String orderId) {
        UUID id = dev.once.outbox.UuidV7.next();
        outbox.append(OutboxEvent.builder().id(id)
                .tenantId(tenant).actorId(actor)
                .aggregate("order", orderId).type("OrderShipped", 1)
                .payloadJson("{\"order_id\":\"" + orderId + "\"}")
                .build());
        return id;
    }
}
