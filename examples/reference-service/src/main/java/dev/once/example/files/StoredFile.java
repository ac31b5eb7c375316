package dev.once.example.files;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;

@Entity
@Table(name = "stored_file")
class StoredFile {

    @Id
    private UUID id;

    @Column(name = "tenant_id", nullable = false, updatable = false)
    private String tenantId;

    @Column(nullable = false)
    private String name;

    @Column(name = "size_bytes", nullable = false)
    private long sizeBytes;

    @Column(nullable = false)
    private String sha256;

    @Column(nullable = false)
    private String state;

    @Column(name = "created_by", nullable = false, updatable = false)
    private String createdBy;

    @Column(name = "completed_at")
    private Instant completedAt;

    protected StoredFile() {
    }

    StoredFile(UUID id, String tenantId, String name, long sizeBytes, String sha256, String createdBy) {
        this.id = id;
        this.tenantId = tenantId;
        this.name = name;
        this.sizeBytes = sizeBytes;
        this.sha256 = sha256;
        this.state = "stored";
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

    long sizeBytes() {
        return sizeBytes;
    }

    String sha256() {
        return sha256;
    }

    String state() {
        return state;
    }

    Instant completedAt() {
        return completedAt;
    }
}
