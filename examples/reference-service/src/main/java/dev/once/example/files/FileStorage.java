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
import java.util.stream.Stream;
import org.springframework.stereotype.Component;

/**
 * The local file storage, content-addressed: {@code <data-dir>/files/<tenant>/<sha256 of the bytes>}. Bytes are
 * written to a temporary file, forced to disk and moved into place atomically.
 *
 * <p>Writing a file is an effect outside the database, so it cannot commit or roll back with the request. Naming it by
 * its content makes it idempotent on its own: every execution of one request (a retry after a crash, a failed commit,
 * a lapsed lease, even two at once) writes the same bytes to the same path, and nothing needs undoing when an
 * attempt fails. A name derived from the idempotency record would not do: a database crash can forget an
 * asynchronously committed claim (the retry then gets another record), and a key reused after its TTL keeps the
 * record (and would overwrite the earlier request's file). Files are never deleted here; a file is an orphan, with no
 * row, only when a request failed after writing and was never retried with the same body.
 */
@Component
public class FileStorage {

    private final Path root;

    FileStorage(ReferenceProperties properties) {
        this.root = properties.dataDir().resolve("files").toAbsolutePath();
    }

    /** Stores {@code bytes} under their SHA-256 ({@code sha256}, hex); writing the same bytes again is harmless. */
    void write(String tenantId, String sha256, byte[] bytes) {
        Path target = path(tenantId, sha256);
        try {
            Files.createDirectories(target.getParent());
            Path temporary = Files.createTempFile(target.getParent(), sha256 + ".", ".part");
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
            throw new UncheckedIOException("Could not store file " + sha256, e);
        }
    }

    /**
     * How many distinct files the storage holds: the effects ledger shows it next to the {@code stored_file} rows
     * (equal when every file's content is distinct and no request was abandoned after writing).
     */
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

    private Path path(String tenantId, String sha256) {
        Path tenantDir = root.resolve(tenantId).normalize();
        if (!tenantDir.getParent().equals(root)) {
            throw new IllegalArgumentException("Tenant id " + tenantId + " is not a plain directory name");
        }
        return tenantDir.resolve(sha256);
    }
}
