package dev.once.example.files;

import dev.once.example.ApiProblem;
import dev.once.example.Tenancy;
import dev.once.example.Validation;
import dev.once.guard.MutationContext;
import dev.once.guard.web.Idempotent;
import dev.once.outbox.UuidV7;
import jakarta.servlet.http.HttpServletRequest;
import java.net.URI;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.data.domain.Limit;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Storing and confirming uploads. Storing writes bytes outside the database, so besides the guard it takes one more
 * precaution: the bytes are stored under their own hash ({@link FileStorage}), so a re-execution after a crash writes
 * the same file again instead of a second one. The row, its event and the completion commit together or not at all.
 */
@RestController
@RequestMapping("/files")
class FilesController {

    static final int MAX_FILE_BYTES = 256 * 1024;

    record StoreFile(String name, String contentBase64) {
    }

    record FileView(UUID id, String tenantId, String name, long sizeBytes, String sha256, String state,
                    Instant completedAt) {
        static FileView of(StoredFile file) {
            return new FileView(file.id(), file.tenantId(), file.name(), file.sizeBytes(), file.sha256(), file.state(),
                    file.completedAt());
        }
    }

    private final StoredFileRepository files;
    private final FileStorage storage;
    private final Tenancy tenancy;

    FilesController(StoredFileRepository files, FileStorage storage, Tenancy tenancy) {
        this.files = files;
        this.storage = storage;
        this.tenancy = tenancy;
    }

    @Idempotent
    @PostMapping
    ResponseEntity<FileView> store(@RequestBody StoreFile body, MutationContext once) {
        String name = Validation.text("name", body.name(), 255);
        byte[] bytes = Validation.base64("content_base64", body.contentBase64(), MAX_FILE_BYTES);
        String tenant = once.scope().tenantId();
        String sha256 = sha256(bytes);
        storage.write(tenant, sha256, bytes);
        UUID id = UuidV7.next();
        StoredFile file = files.save(new StoredFile(id, tenant, name, bytes.length, sha256, once.scope().userId()));
        once.append(once.event("file", id.toString(), "FileStored", 1)
                .payload(Map.of("file_id", id.toString(), "name", name, "size_bytes", bytes.length,
                        "sha256", file.sha256()))
                .build());
        return ResponseEntity.created(URI.create("/files/" + id)).body(FileView.of(file));
    }

    @Idempotent
    @PostMapping("/{id}/complete")
    ResponseEntity<FileView> complete(@PathVariable UUID id, MutationContext once) {
        String tenant = once.scope().tenantId();
        if (files.complete(id, tenant) == 0) {
            StoredFile existing = files.findByIdAndTenantId(id, tenant).orElseThrow(() -> ApiProblem.notFound("file"));
            throw ApiProblem.of(HttpStatus.CONFLICT, "FILE_ALREADY_COMPLETED",
                    "File " + existing.id() + " was completed by an earlier request.");
        }
        StoredFile file = files.findByIdAndTenantId(id, tenant).orElseThrow();
        once.append(once.event("file", id.toString(), "FileUploadCompleted", 1)
                .payload(Map.of("file_id", id.toString(), "sha256", file.sha256()))
                .build());
        return ResponseEntity.ok(FileView.of(file));
    }

    @GetMapping("/{id}")
    FileView read(@PathVariable UUID id, HttpServletRequest request) {
        return files.findByIdAndTenantId(id, tenancy.of(request).tenantId()).map(FileView::of)
                .orElseThrow(() -> ApiProblem.notFound("file"));
    }

    @GetMapping
    List<FileView> list(HttpServletRequest request) {
        return files.findByTenantIdOrderByIdDesc(tenancy.of(request).tenantId(), Limit.of(100)).stream()
                .map(FileView::of).toList();
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
