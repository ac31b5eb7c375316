package dev.once.guard.web;

import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;
import java.util.Optional;

/**
 * The user is the servlet request's authenticated principal ({@link HttpServletRequest#getUserPrincipal()}); every
 * user belongs to one configured tenant. Used when Spring Security is absent.
 */
final class ServletPrincipalResolver implements IdempotencyPrincipalResolver {

    private final String tenantId;

    ServletPrincipalResolver(String tenantId) {
        this.tenantId = tenantId;
    }

    @Override
    public Optional<IdempotencyPrincipal> resolve(HttpServletRequest request) {
        Principal principal = request.getUserPrincipal();
        return principal == null ? Optional.empty() : Optional.of(new IdempotencyPrincipal(tenantId, principal.getName()));
    }
}
