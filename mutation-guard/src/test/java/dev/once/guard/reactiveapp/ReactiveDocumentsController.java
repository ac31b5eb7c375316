package dev.once.guard.reactiveapp;

import dev.once.guard.MutationContext;
import dev.once.guard.web.Idempotent;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** {@link dev.once.guard.app.DocumentsController} on WebFlux: whatever JSON a client sends, stored in {@code jsonb}. */
@RestController
public class ReactiveDocumentsController {

    private final Accounts store;

    public ReactiveDocumentsController(Accounts store) {
        this.store = store;
    }

    @Idempotent
    @PostMapping(path = "/documents", consumes = {"application/json", "application/*+json", "text/plain"})
    public Mono<ResponseEntity<Map<String, Object>>> store(@RequestBody byte[] document, MutationContext ctx) {
        UUID id = UUID.randomUUID();
        return Mono.defer(() -> store.insertDocument(id, ctx.scope().tenantId(),
                new String(document, StandardCharsets.UTF_8))).then(Mono.fromSupplier(() -> {
                    ctx.append(ctx.event("document", id.toString(), "DocumentStored", 1)
                            .payload(Map.of("id", id.toString(), "bytes", document.length)).build());
                    return ResponseEntity.created(URI.create("/documents/" + id))
                            .body(Map.<String, Object>of("id", id.toString(), "bytes", document.length));
                }));
    }
}
