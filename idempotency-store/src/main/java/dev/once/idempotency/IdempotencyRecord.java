package dev.once.idempotency;

import jakarta.persistence.AttributeConverter;
import jakarta.persistence.Column;
import jakarta.persistence.Convert;
import jakarta.persistence.Converter;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;
import org.hibernate.annotations.Immutable;

/**
 * The {@code idempotency_record} row, mapped for reads and operator views through {@link IdempotencyRecordRepository}.
 * Read-only by design ({@link Immutable}): every write goes through {@link IdempotencyStore}, whose single-statement
 * claims and fenced transitions an entity update could not reproduce.
 */
@Entity
@Immutable
@Table(name = "idempotency_record")
public class IdempotencyRecord {

    @Id
    private Long id;

    @Column(name = "tenant_id")
    private String tenantId;

    @Column(name = "user_id")
    private String userId;

    private String route;

    @Column(name = "idempotency_key")
    private String idempotencyKey;

    @Column(name = "request_hash")
    private String requestHash;

    @Convert(converter = StatusConverter.class)
    private IdempotencyStatus status;

    @Column(name = "fencing_token")
    private long fencingToken;

    @Column(name = "response_code")
    private Integer responseCode;

    @Column(name = "response_content_type")
    private String responseContentType;

    @Column(name = "response_headers", columnDefinition = "jsonb")
    private String responseHeaders;

    @Column(name = "response_body")
    private byte[] responseBody;

    @Column(name = "response_body_omitted")
    private boolean responseBodyOmitted;

    @Column(name = "task_id")
    private String taskId;

    @Column(name = "outbox_event_id")
    private UUID outboxEventId;

    @Column(name = "locked_until")
    private Instant lockedUntil;

    @Column(name = "expires_at")
    private Instant expiresAt;

    @Column(name = "claimed_at")
    private Instant claimedAt;

    @Column(name = "created_at")
    private Instant createdAt;

    @Column(name = "updated_at")
    private Instant updatedAt;

    protected IdempotencyRecord() {
        // for JPA
    }

    public Long getId() {
        return id;
    }

    public String getTenantId() {
        return tenantId;
    }

    public String getUserId() {
        return userId;
    }

    public String getRoute() {
        return route;
    }

    public String getIdempotencyKey() {
        return idempotencyKey;
    }

    public String getRequestHash() {
        return requestHash;
    }

    public IdempotencyStatus getStatus() {
        return status;
    }

    /** How many times the record was claimed; the fencing token transitions must present. */
    public long getFencingToken() {
        return fencingToken;
    }

    public Integer getResponseCode() {
        return responseCode;
    }

    public String getResponseContentType() {
        return responseContentType;
    }

    /** Replayable response headers as a JSON object, or {@code null}. */
    public String getResponseHeaders() {
        return responseHeaders;
    }

    public byte[] getResponseBody() {
        return responseBody == null ? null : responseBody.clone();
    }

    public boolean isResponseBodyOmitted() {
        return responseBodyOmitted;
    }

    public String getTaskId() {
        return taskId;
    }

    public UUID getOutboxEventId() {
        return outboxEventId;
    }

    public Instant getLockedUntil() {
        return lockedUntil;
    }

    public Instant getExpiresAt() {
        return expiresAt;
    }

    public Instant getClaimedAt() {
        return claimedAt;
    }

    public Instant getCreatedAt() {
        return createdAt;
    }

    public Instant getUpdatedAt() {
        return updatedAt;
    }

    /** Maps {@link IdempotencyStatus} to the lower-case values the store writes to the {@code status} column. */
    @Converter
    static class StatusConverter implements AttributeConverter<IdempotencyStatus, String> {

        @Override
        public String convertToDatabaseColumn(IdempotencyStatus status) {
            return status == null ? null : status.dbValue();
        }

        @Override
        public IdempotencyStatus convertToEntityAttribute(String value) {
            return value == null ? null : IdempotencyStatus.fromDb(value);
        }
    }
}
