package dev.once.example.accounts;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.util.UUID;

@Entity
@Table(name = "account")
class Account {

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

    Account(UUID id, String tenantId, String name, String email, String createdBy) {
        this.id = id;
        this.tenantId = tenantId;
        this.name = name;
        this.email = email;
        this.createdBy = createdBy;
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
