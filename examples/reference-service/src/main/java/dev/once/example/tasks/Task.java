package dev.once.example.tasks;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import org.hibernate.annotations.ColumnTransformer;

@Entity
@Table(name = "task")
class Task {

    @Id
    private String id;

    @Column(name = "tenant_id", nullable = false, updatable = false)
    private String tenantId;

    @Column(nullable = false)
    private String type;

    @Column(nullable = false, columnDefinition = "jsonb")
    @ColumnTransformer(write = "?::jsonb")
    private String params;

    @Column(nullable = false)
    private String state;

    @Column(columnDefinition = "jsonb", insertable = false, updatable = false)
    private String result;

    @Column(name = "submitted_by", nullable = false, updatable = false)
    private String submittedBy;

    @Column(name = "done_at", insertable = false, updatable = false)
    private Instant doneAt;

    protected Task() {
    }

    Task(String id, String tenantId, String type, String paramsJson, String submittedBy) {
        this.id = id;
        this.tenantId = tenantId;
        this.type = type;
        this.params = paramsJson;
        this.state = "submitted";
        this.submittedBy = submittedBy;
    }

    String id() {
        return id;
    }

    String type() {
        return type;
    }

    String params() {
        return params;
    }

    String state() {
        return state;
    }

    String result() {
        return result;
    }

    Instant doneAt() {
        return doneAt;
    }
}
