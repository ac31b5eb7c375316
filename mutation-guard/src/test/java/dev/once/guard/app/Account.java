package dev.once.guard.app;

import dev.once.outbox.OutboxMapping;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.util.UUID;
import org.springframework.data.domain.AbstractAggregateRoot;

@Entity
@Table(name = "account")
public class Account extends AbstractAggregateRoot<Account> {

    @Id
    private UUID id;

    @Column(name = "tenant_id", nullable = false)
    private String tenantId;

    @Column(nullable = false)
    private String name;

    private String email;

    protected Account() {
    }

    public Account(UUID id, String tenantId, String name, String email) {
        this.id = id;
        this.tenantId = tenantId;
        this.name = name;
        this.email = email;
    }

    /** An account that registers {@link AccountRegistered}; Spring Data publishes it when the repository saves it. */
    public static Account registered(UUID id, String tenantId, String name, String email) {
        Account account = new Account(id, tenantId, name, email);
        account.registerEvent(new AccountRegistered(id, name, email));
        return account;
    }

    /** A domain event mapped to the outbox; inside a guarded request its tenant and actor are the request's. */
    @OutboxMapping(aggregate = "account", aggregateId = "accountId")
    public record AccountRegistered(UUID accountId, String name, String email) {
    }

    public UUID getId() {
        return id;
    }

    public String getTenantId() {
        return tenantId;
    }

    public String getName() {
        return name;
    }

    public String getEmail() {
        return email;
    }
}
