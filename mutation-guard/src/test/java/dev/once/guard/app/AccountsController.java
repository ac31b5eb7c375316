package dev.once.guard.app;

import dev.once.guard.InProgressBehaviour;
import dev.once.guard.MutationContext;
import dev.once.guard.web.Idempotent;
import java.net.URI;
import java.util.Map;
import java.util.UUID;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.security.core.Authentication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

@RestController
public class AccountsController {

    public record CreateAccount(String name, String email) {
    }

    private final AccountRepository accounts;
    private final Probe probe;
    private final ObjectProvider<AccountsController> self;

    public AccountsController(AccountRepository accounts, Probe probe,
                              ObjectProvider<AccountsController> self) {
        this.accounts = accounts;
        this.probe = probe;
        this.self = self;
    }

    @Idempotent
    @PostMapping("/accounts")
    public ResponseEntity<Map<String, Object>> create(@RequestBody CreateAccount body, MutationContext ctx)
            throws InterruptedException {
        probe.ran("create");
        probe.passGate();
        return created(body, ctx);
    }

    @Idempotent(inProgress = InProgressBehaviour.WAIT, waitMax = "20s")
    @PostMapping("/accounts/patient")
    public ResponseEntity<Map<String, Object>> createPatiently(@RequestBody CreateAccount body, MutationContext ctx)
            throws InterruptedException {
        probe.ran("patient");
        probe.passGate();
        return created(body, ctx);
    }

    @Idempotent(lease = "1s", ttl = "1h")
    @PostMapping("/accounts/short-lease")
    public ResponseEntity<Map<String, Object>> createWithShortLease(@RequestBody CreateAccount body, MutationContext ctx)
            throws InterruptedException {
        if (probe.ran("short-lease") == 1) {
            probe.passGate(); // the first attempt hangs like a dying process
        }
        return created(body, ctx);
    }

    @Idempotent
    @PostMapping("/accounts/failing")
    public ResponseEntity<Map<String, Object>> createThenFail(@RequestBody CreateAccount body, MutationContext ctx) {
        probe.ran("failing");
        created(body, ctx);
        throw new ResponseStatusException(HttpStatus.PAYMENT_REQUIRED, "the plan does not allow another account");
    }

    @Idempotent(retryFailed = true)
    @PostMapping("/accounts/flaky")
    public ResponseEntity<Map<String, Object>> createFlaky(@RequestBody CreateAccount body, MutationContext ctx) {
        probe.ran("flaky");
        ResponseEntity<Map<String, Object>> response = created(body, ctx);
        if (probe.failuresLeft.getAndDecrement() > 0) {
            throw new IllegalStateException("downstream hiccup");
        }
        return response;
    }

    @Idempotent
    @PostMapping("/accounts/busy")
    public ResponseEntity<Map<String, Object>> createWhenNotBusy(@RequestBody CreateAccount body, MutationContext ctx) {
        probe.ran("busy");
        if (probe.failuresLeft.getAndDecrement() > 0) {
            return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).build();
        }
        return created(body, ctx);
    }

    @Idempotent
    @PostMapping("/tasks")
    public ResponseEntity<Map<String, Object>> submitTask(@RequestBody Map<String, Object> body, MutationContext ctx) {
        probe.ran("tasks");
        String taskId = "task-" + UUID.randomUUID();
        ctx.bindTask(taskId);
        ctx.append(ctx.event("task", taskId, "TaskSubmitted", 1).payload(Map.of("task_id", taskId)).build());
        return ResponseEntity.status(HttpStatus.ACCEPTED).body(Map.of("task_id", taskId));
    }

    @Idempotent
    @PostMapping("/accounts/{id}/notes")
    public ResponseEntity<Map<String, Object>> addNote(@PathVariable UUID id, @RequestBody Map<String, Object> body,
                                                       @org.springframework.web.bind.annotation.RequestParam(defaultValue = "normal") String priority) {
        probe.ran("notes");
        return ResponseEntity.status(HttpStatus.CREATED).body(Map.of("account", id.toString(), "priority", priority));
    }

    /** Confirms an upload: no body to answer with, only the status. */
    @Idempotent
    @PostMapping("/uploads/{id}/confirmation")
    public ResponseEntity<Void> confirmUpload(@PathVariable UUID id, @RequestBody Map<String, Object> body) {
        probe.ran("confirm-upload");
        return ResponseEntity.noContent().build();
    }

    /** Not declared idempotent: calls a declared route's method as code, through its proxy, and reports what it got. */
    @PostMapping("/accounts/{id}/notes/forwarded")
    public ResponseEntity<Map<String, Object>> forwardNote(@PathVariable UUID id, @RequestBody Map<String, Object> body) {
        ResponseEntity<Map<String, Object>> inner = self.getObject().addNote(id, body, "forwarded");
        return ResponseEntity.ok(Map.of("inner_status", inner.getStatusCode().value(),
                "inner_replayed", String.valueOf(inner.getHeaders().getFirst("Idempotent-Replayed"))));
    }

    /** The account's domain event goes to the outbox by itself, bound to the request's record: no append here. */
    @Idempotent
    @PostMapping("/accounts/registered")
    public ResponseEntity<Map<String, Object>> register(@RequestBody CreateAccount body, MutationContext ctx) {
        probe.ran("register");
        Account account = accounts.save(Account.registered(UUID.randomUUID(), ctx.scope().tenantId(), body.name(),
                body.email()));
        return ResponseEntity.created(URI.create("/accounts/" + account.getId())).body(json(account));
    }

    /** Not declared idempotent: untouched by Once even when a client sends a key. */
    @PostMapping("/accounts/unguarded")
    public ResponseEntity<Map<String, Object>> createUnguarded(@RequestBody CreateAccount body, Authentication user) {
        probe.ran("unguarded");
        Account account = accounts.save(new Account(UUID.randomUUID(), "acme", body.name(), body.email()));
        return ResponseEntity.created(URI.create("/accounts/" + account.getId())).body(json(account));
    }

    @Idempotent
    @GetMapping("/accounts/{id}")
    public ResponseEntity<Map<String, Object>> read(@PathVariable UUID id) {
        probe.ran("read");
        return accounts.findById(id).map(a -> ResponseEntity.ok(json(a))).orElse(ResponseEntity.notFound().build());
    }

    private ResponseEntity<Map<String, Object>> created(CreateAccount body, MutationContext ctx) {
        Account account = accounts.save(new Account(UUID.randomUUID(), ctx.scope().tenantId(), body.name(), body.email()));
        ctx.append(ctx.event("account", account.getId().toString(), "AccountCreated", 1).payload(json(account)).build());
        return ResponseEntity.created(URI.create("/accounts/" + account.getId())).body(json(account));
    }

    private static Map<String, Object> json(Account a) {
        return Map.of("id", a.getId().toString(), "name", a.getName(), "email", String.valueOf(a.getEmail()),
                "tenant_id", a.getTenantId());
    }
}
