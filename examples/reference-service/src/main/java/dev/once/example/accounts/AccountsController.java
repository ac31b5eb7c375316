package dev.once.example.accounts;

import dev.once.example.ApiProblem;
import dev.once.example.Tenancy;
import dev.once.example.Validation;
import dev.once.guard.MutationContext;
import dev.once.guard.web.Idempotent;
import jakarta.servlet.http.HttpServletRequest;
import java.net.URI;
import java.util.List;
import java.util.UUID;
import org.springframework.data.domain.Limit;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Creating an account is the design document's first high-risk write: a client that times out and retries must
 * never end up with two accounts. The route declares it with {@code @Idempotent}; the account row, the
 * {@code AccountCreated} event its aggregate registers and the stored response commit in one transaction. (Tasks
 * show the explicit {@code MutationContext.append}.)
 */
@RestController
@RequestMapping("/accounts")
class AccountsController {

    record CreateAccount(String name, String email) {
    }

    record AccountView(UUID id, String name, String email, String tenantId) {
        static AccountView of(Account account) {
            return new AccountView(account.id(), account.name(), account.email(), account.tenantId());
        }
    }

    private final AccountRepository accounts;
    private final Tenancy tenancy;

    AccountsController(AccountRepository accounts, Tenancy tenancy) {
        this.accounts = accounts;
        this.tenancy = tenancy;
    }

    @Idempotent
    @PostMapping
    ResponseEntity<AccountView> create(@RequestBody CreateAccount body, MutationContext once) {
        String name = Validation.text("name", body.name(), 200);
        String email = Validation.email(body.email());
        // the aggregate registers AccountCreated; saving it appends the event, bound to this request's record
        Account account = accounts.save(Account.open(once.scope().tenantId(), name, email, once.scope().userId()));
        return ResponseEntity.created(URI.create("/accounts/" + account.id())).body(AccountView.of(account));
    }

    @GetMapping("/{id}")
    AccountView read(@PathVariable UUID id, HttpServletRequest request) {
        return accounts.findByIdAndTenantId(id, tenancy.of(request).tenantId()).map(AccountView::of)
                .orElseThrow(() -> ApiProblem.notFound("account"));
    }

    @GetMapping
    List<AccountView> list(HttpServletRequest request) {
        return accounts.findByTenantIdOrderByIdDesc(tenancy.of(request).tenantId(), Limit.of(100)).stream()
                .map(AccountView::of).toList();
    }
}
