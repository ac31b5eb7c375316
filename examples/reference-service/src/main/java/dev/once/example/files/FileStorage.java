package dev.once.example.files;

import dev.once.example.ReferenceProperties;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.UUID;
import java.util.stream.Stream;
import org.springframework.stereotype.Component;

/**
 * The local file storage: {@code <data-dir>/files/<tenant>/<file id>}. Bytes are written to a temporary file and
 * moved into place atomically, under a name derived from the idempotency record, so that a re-execution (after a
 * crash or a failed commit, once the key is free again) overwrites the same file instead of writing a second one.
 *
 * <p>A rolled-back attempt does <em>not</em> delete its file: the retry that owns the key by then writes the very
 * same path, and a late cleanup by the stale attempt would delete the new owner's file (the reliability suite caught
 * exactly that when PostgreSQL restarted mid-commit). The price is an orphan file, without a row, when a request
 * fails after writing and is never retried.
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
            try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.WRITE)) {
                channel.write(ByteBuffer.wrap(bytes));
                channel.force(true); // on disk before the row that points at it commits
            }
            try {
                Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("Could not store file " + id, e);
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
}
