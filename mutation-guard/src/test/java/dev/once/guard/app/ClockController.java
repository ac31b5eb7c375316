package dev.once.guard.app;

import dev.once.guard.MutationContext;
import dev.once.guard.web.Idempotent;
import java.net.URI;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * A route with a short lease and TTL for tests of the database clock: a request may ask its handler to take
 * {@code X-Hold-Millis} before it writes, like a slow downstream call, so that it holds its lease across instances.
 */
@RestController
public class ClockController {

    private final AccountRepository accounts;

    public ClockController(AccountRepository accounts) {
        this.accounts = accounts;
    }

    @Idempotent(lease = "10s", ttl = "12s")
    @PostMapping("/clock/accounts")
    public ResponseEntity<Map<String, Object>> create(@RequestBody AccountsController.CreateAccount body,
                                                      @RequestHeader(name = "X-Hold-Millis", defaultValue = "0") long hold,
                                                      MutationContext ctx) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(hold));
        Account account = accounts.save(new Account(UUID.randomUUID(), ctx.scope().tenantId(), body.name(), body.email()));
        return ResponseEntity.created(URI.create("/accounts/" + account.getId()))
                .body(Map.of("id", account.getId().toString(), "name", account.getName()));
    }

    /** This JVM's own clock, which the guard must never consult for a lease or a TTL. */
    @GetMapping("/clock/now")
    public Map<String, Object> now() {
        return Map.of("now", Instant.now().toString());
    }
}
