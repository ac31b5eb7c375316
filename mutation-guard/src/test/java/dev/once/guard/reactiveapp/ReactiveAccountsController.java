package dev.once.guard.reactiveapp;

import dev.once.guard.InProgressBehaviour;
import dev.once.guard.MutationContext;
import dev.once.guard.app.Probe;
import dev.once.guard.web.Idempotent;
import dev.once.guard.web.IdempotentHandlerFilter;
import java.net.URI;
import java.util.Map;
import java.util.UUID;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.ResponseStatusException;
import reactor.core.publisher.Mono;

/** The routes of {@link dev.once.guard.app.AccountsController} on WebFlux, and the same create as a functional route. */
@RestController
public class ReactiveAccountsController {

    public record CreateAccount(String name, String email) {
    }

    private final Accounts accounts;
    private final Probe probe;

    public ReactiveAccountsController(Accounts accounts, Probe probe) {
        this.accounts = accounts;
        this.probe = probe;
    }

    @Idempotent
    @PostMapping("/accounts")
    public Mono<ResponseEntity<Map<String, Object>>> create(@RequestBody CreateAccount body, MutationContext ctx) {
        return accounts.blocking(() -> {
            probe.ran("create");
            probe.passGate();
            return true;
        }).then(created(body, ctx));
    }

    @Idempotent(inProgress = InProgressBehaviour.WAIT, waitMax = "20s")
    @PostMapping("/accounts/patient")
    public Mono<ResponseEntity<Map<String, Object>>> createPatiently(@RequestBody CreateAccount body, MutationContext ctx) {
        return accounts.blocking(() -> {
            probe.ran("patient");
            probe.passGate();
            return true;
        }).then(created(body, ctx));
    }

    @Idempotent(lease = "1s", ttl = "1h")
    @PostMapping("/accounts/short-lease")
    public Mono<ResponseEntity<Map<String, Object>>> createWithShortLease(@RequestBody CreateAccount body,
                                                                           MutationContext ctx) {
        return accounts.blocking(() -> {
            if (probe.ran("short-lease") == 1) {
                probe.passGate(); // the first attempt hangs like a dying process
            }
            return true;
        }).then(created(body, ctx));
    }

    @Idempotent
    @PostMapping("/accounts/failing")
    public Mono<ResponseEntity<Map<String, Object>>> createThenFail(@RequestBody CreateAccount body, MutationContext ctx) {
        probe.ran("failing");
        return created(body, ctx).then(Mono.error(new ResponseStatusException(HttpStatus.PAYMENT_REQUIRED,
                "the plan does not allow another account")));
    }

    @Idempotent(retryFailed = true)
    @PostMapping("/accounts/flaky")
    public Mono<ResponseEntity<Map<String, Object>>> createFlaky(@RequestBody CreateAccount body, MutationContext ctx) {
        probe.ran("flaky");
        return created(body, ctx).flatMap(response -> probe.failuresLeft.getAndDecrement() > 0
                ? Mono.error(new IllegalStateException("downstream hiccup")) : Mono.just(response));
    }

    @Idempotent
    @PostMapping("/accounts/busy")
    public Mono<ResponseEntity<Map<String, Object>>> createWhenNotBusy(@RequestBody CreateAccount body,
                                                                        MutationContext ctx) {
        probe.ran("busy");
        if (probe.failuresLeft.getAndDecrement() > 0) {
            return Mono.just(ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).build());
        }
        return created(body, ctx);
    }

    @Idempotent
    @PostMapping("/tasks")
    public Mono<ResponseEntity<Map<String, Object>>> submitTask(@RequestBody Map<String, Object> body,
                                                                 MutationContext ctx) {
        return Mono.fromSupplier(() -> {
            probe.ran("tasks");
            String taskId = "task-" + UUID.randomUUID();
            ctx.bindTask(taskId);
            ctx.append(ctx.event("task", taskId, "TaskSubmitted", 1).payload(Map.of("task_id", taskId)).build());
            return ResponseEntity.status(HttpStatus.ACCEPTED).body(Map.<String, Object>of("task_id", taskId));
        });
    }

    @Idempotent
    @PostMapping("/accounts/{id}/notes")
    public Mono<ResponseEntity<Map<String, Object>>> addNote(@PathVariable UUID id, @RequestBody Map<String, Object> body,
                                                              @RequestParam(defaultValue = "normal") String priority) {
        return Mono.fromSupplier(() -> {
            probe.ran("notes");
            return ResponseEntity.status(HttpStatus.CREATED)
                    .body(Map.<String, Object>of("account", id.toString(), "priority", priority));
        });
    }

    @Idempotent
    @PostMapping("/uploads/{id}/confirmation")
    public Mono<ResponseEntity<Void>> confirmUpload(@PathVariable UUID id, @RequestBody Map<String, Object> body) {
        return Mono.fromSupplier(() -> {
            probe.ran("confirm-upload");
            return ResponseEntity.noContent().build();
        });
    }

    /** Reads the request's security context inside its work, as reactive code does. */
    @Idempotent
    @PostMapping("/accounts/whoami")
    public Mono<ResponseEntity<Map<String, Object>>> whoami(@RequestBody Map<String, Object> body) {
        return org.springframework.security.core.context.ReactiveSecurityContextHolder.getContext()
                .map(security -> ResponseEntity.ok(Map.<String, Object>of("user", security.getAuthentication().getName())))
                .defaultIfEmpty(ResponseEntity.ok(Map.of("user", "nobody")));
    }

    @PostMapping("/accounts/unguarded")
    public Mono<ResponseEntity<Map<String, Object>>> createUnguarded(@RequestBody CreateAccount body) {
        probe.ran("unguarded");
        return accounts.insert("acme", body.name(), body.email())
                .map(a -> ResponseEntity.created(URI.create("/accounts/" + a.get("id"))).body(a));
    }

    @Idempotent
    @GetMapping("/accounts/{id}")
    public Mono<ResponseEntity<Map<String, Object>>> read(@PathVariable UUID id) {
        probe.ran("read");
        return accounts.find(id).map(ResponseEntity::ok).defaultIfEmpty(ResponseEntity.notFound().build());
    }

    /** The create route as a functional route: the filter guards it, the handler reaches its context by the request. */
    @Bean
    static RouterFunction<ServerResponse> functionalAccounts(IdempotentHandlerFilter idempotent, Accounts accounts,
                                                             Probe probe) {
        return RouterFunctions.route().POST("/fn/accounts", request -> {
            MutationContext ctx = IdempotentHandlerFilter.context(request);
            return request.bodyToMono(CreateAccount.class).flatMap(body -> accounts.blocking(() -> {
                probe.ran("fn-create");
                probe.passGate();
                return true;
            }).then(accounts.insert(ctx.scope().tenantId(), body.name(), body.email()))).flatMap(account -> {
                ctx.append(ctx.event("account", account.get("id").toString(), "AccountCreated", 1).payload(account).build());
                return ServerResponse.created(URI.create("/accounts/" + account.get("id"))).bodyValue(account);
            });
        }).filter(idempotent).build();
    }

    private Mono<ResponseEntity<Map<String, Object>>> created(CreateAccount body, MutationContext ctx) {
        return Mono.defer(() -> accounts.insert(ctx.scope().tenantId(), body.name(), body.email())).map(account -> {
            ctx.append(ctx.event("account", account.get("id").toString(), "AccountCreated", 1).payload(account).build());
            return ResponseEntity.created(URI.create("/accounts/" + account.get("id"))).body(account);
        });
    }
}
