package dev.once.example.outbox;

import dev.once.outbox.OutboxEvent;
import dev.once.outbox.OutboxWriter;
import java.util.UUID;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * A plain {@code @Transactional} service: the order row and its {@code OrderPlaced} event commit together or not at
 * all. The event names its tenant and its actor, which consumers scope their work by; here they come from the
 * caller, who took them from its authenticated principal.
 */
@Service
public class Orders {

    static final String INSERT = "INSERT INTO orders (id, tenant_id, customer, amount_cents) VALUES (?, ?, ?, ?)";

    private final JdbcTemplate jdbc;
    private final OutboxWriter outbox;

    public Orders(JdbcTemplate jdbc, OutboxWriter outbox) {
        this.jdbc = jdbc;
        this.outbox = outbox;
    }

    @Transactional
    public UUID place(String tenant, String customer, long amountCents) {
        UUID id = UUID.randomUUID();
        jdbc.update(INSERT, id, tenant, customer, amountCents);
        outbox.append(OutboxEvent.builder()
                .tenantId(tenant).actorId(customer)
                .aggregate("order", id.toString()).type("OrderPlaced", 1)
                .payloadJson("{\"order_id\":\"" + id + "\",\"amount_cents\":" + amountCents + "}")
                .build());
        return id;
    }
}
