package dev.once.example.files;

import dev.once.example.ReferenceProperties;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.UUID;
import java.util.stream.Stream;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The local file storage: {@code <data-dir>/files/<tenant>/<file id>}. Bytes are written to a temporary file and
 * moved into place atomically, under a name derived from the idempotency record, so that a re-execution (after a
 * crash, once the lease lapsed) overwrites the same file instead of writing a second one. If the surrounding
 * transaction rolls back, the file is removed again.
 */
@Component
public class FileStorage {

    private final Path root;

    FileStorage(ReferenceProperties properties) {
        this.root = properties.dataDir().resolve("files").toAbsolutePath();
    }

    void write(String tenantId, UUID id, byte[] bytes) {
        Path target = path(tenantId, id);
        try {
            Files.createDirectories(target.getParent());
            Path temporary = Files.createTempFile(target.getParent(), id + ".", ".part");
            Files.write(temporary, bytes);
            try {
                Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Could not store file " + id, e);
        }
        if (TransactionSynchronizationManager.isSynchronizationActive()) {
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void afterCompletion(int status) {
                    if (status == STATUS_ROLLED_BACK) {
                        delete(target);
                    }
                }
            });
        }
    }

    /** How many files the storage holds: the effects ledger compares it with the {@code stored_file} rows. */
    public long count() {
        if (!Files.isDirectory(root)) {
            return 0;
        }
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(Files::isRegularFile).filter(p -> !p.getFileName().toString().endsWith(".part")).count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Path path(String tenantId, UUID id) {
        Path tenantDir = root.resolve(tenantId).normalize();
        if (!tenantDir.getParent().equals(root)) {
            throw new IllegalArgumentException("Tenant id " + tenantId + " is not a plain directory name");
        }
        return tenantDir.resolve(id.toString());
    }

    private static void delete(Path target) {
        try {
            Files.deleteIfExists(target);
        } catch (IOException ignored) {
            // an orphan file is harmless: it has no row, and the same request rewrites it
        }
    }
}
