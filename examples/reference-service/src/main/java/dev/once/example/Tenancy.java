package dev.once.example;

import dev.once.guard.web.IdempotencyPrincipal;
import dev.once.guard.web.IdempotencyPrincipalResolver;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;

/**
 * The tenant and user of a request, resolved exactly as Once's guard resolves them (the same
 * {@link IdempotencyPrincipalResolver} bean), so that reads and guarded writes can never disagree about the tenant.
 */
@Component
public class Tenancy {

    private final IdempotencyPrincipalResolver principals;

    Tenancy(IdempotencyPrincipalResolver principals) {
        this.principals = principals;
    }

    public IdempotencyPrincipal of(HttpServletRequest request) {
        return principals.resolve(request).orElseThrow(() -> ApiProblem.of(HttpStatus.FORBIDDEN, "NO_TENANT",
                "This user belongs to no tenant; tenant resources are out of its reach."));
    }
}
