package dev.once.example.accounts;

import dev.once.outbox.OutboxMapping;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.util.UUID;
import org.springframework.data.domain.AbstractAggregateRoot;

/**
 * An account, and the aggregate that raises {@link AccountCreated}: Spring Data publishes the events it registers
 * when the repository saves it, and Once appends them to the outbox in the same transaction.
 */
@Entity
@Table(name = "account")
class Account extends AbstractAggregateRoot<Account> {

    @Id
    private UUID id;

    @Column(name = "tenant_id", nullable = false, updatable = false)
    private String tenantId;

    @Column(nullable = false)
    private String name;

    @Column(nullable = false)
    private String email;

    @Column(name = "created_by", nullable = false, updatable = false)
    private String createdBy;

    protected Account() {
    }

    private Account(UUID id, String tenantId, String name, String email, String createdBy) {
        this.id = id;
        this.tenantId = tenantId;
        this.name = name;
        this.email = email;
        this.createdBy = createdBy;
    }

    /** A new account, which registers its {@link AccountCreated}. */
    static Account open(String tenantId, String name, String email, String createdBy) {
        Account account = new Account(UUID.randomUUID(), tenantId, name, email, createdBy);
        account.registerEvent(new AccountCreated(account.id, tenantId, name, email));
        return account;
    }

    /**
     * The account's first event, on topic {@code <prefix>.account} keyed by the account id. Inside the guarded
     * request, the outbox row's tenant and actor are the request's.
     */
    @OutboxMapping(aggregate = "account", aggregateId = "accountId", type = "AccountCreated", version = 1)
    record AccountCreated(UUID accountId, String tenantId, String name, String email) {
    }

    UUID id() {
        return id;
    }

    String tenantId() {
        return tenantId;
    }

    String name() {
        return name;
    }

    String email() {
        return email;
    }
}
