package dev.once.guard.app;

import dev.once.guard.MutationContext;
import dev.once.guard.web.Idempotent;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * Stores whatever JSON document a client sends, as it was sent, in a {@code jsonb} column: the values PostgreSQL
 * refuses there (U+0000, numbers beyond its numeric range, text that is not JSON at all) reach the database.
 */
@RestController
public class DocumentsController {

    static final String TABLE = """
            CREATE TABLE IF NOT EXISTS guard_document (id uuid PRIMARY KEY, tenant_id text NOT NULL, body jsonb NOT NULL)
            """;
    static final String INSERT = "INSERT INTO guard_document (id, tenant_id, body) VALUES (?, ?, CAST(? AS jsonb))";

    private final JdbcTemplate jdbc;

    public DocumentsController(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
        jdbc.execute(TABLE);
    }

    @Idempotent
    @PostMapping(path = "/documents", consumes = {"application/json", "application/*+json", "text/plain"})
    public ResponseEntity<Map<String, Object>> store(@RequestBody byte[] document, MutationContext ctx) {
        return store(UUID.randomUUID(), document, ctx);
    }

    /** Stores the document under an id the client chose: a second document with that id violates the key. */
    @Idempotent
    @PostMapping(path = "/documents/{id}", consumes = {"application/json", "text/plain"})
    public ResponseEntity<Map<String, Object>> storeAs(@PathVariable UUID id, @RequestBody byte[] document,
                                                      MutationContext ctx) {
        return store(id, document, ctx);
    }

    private ResponseEntity<Map<String, Object>> store(UUID id, byte[] document, MutationContext ctx) {
        jdbc.update(INSERT, id, ctx.scope().tenantId(), new String(document, StandardCharsets.UTF_8));
        ctx.append(ctx.event("document", id.toString(), "DocumentStored", 1)
                .payload(Map.of("id", id.toString(), "bytes", document.length)).build());
        return ResponseEntity.created(URI.create("/documents/" + id)).body(Map.of("id", id.toString(),
                "bytes", document.length));
    }
}
