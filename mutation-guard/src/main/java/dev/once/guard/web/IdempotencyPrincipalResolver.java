package dev.once.guard.web;

import jakarta.servlet.http.HttpServletRequest;
import java.util.Optional;

/**
 * Finds the tenant and user of a request from its <em>authenticated</em> principal. Never take them from a header the
 * client controls: a forged tenant would read another tenant's responses. An empty result answers 401.
 */
@FunctionalInterface
public interface IdempotencyPrincipalResolver {

    Optional<IdempotencyPrincipal> resolve(HttpServletRequest request);

    /**
     * The default with Spring Security: the user is the authenticated {@code Authentication}'s name, and the tenant is
     * its one authority that starts with {@code tenantAuthorityPrefix} ({@code TENANT_acme} is tenant {@code acme}),
     * else {@code defaultTenant} (empty refuses users without a tenant). A user with several tenant authorities is
     * refused, never scoped by chance; anonymous requests have no principal.
     */
    static IdempotencyPrincipalResolver fromSecurity(String tenantAuthorityPrefix, String defaultTenant) {
        return new SecurityPrincipalResolver(tenantAuthorityPrefix, defaultTenant);
    }

    /**
     * The default without Spring Security: the user is the request's authenticated principal
     * ({@link HttpServletRequest#getUserPrincipal()}), and every user belongs to {@code tenant}.
     */
    static IdempotencyPrincipalResolver fromServletPrincipal(String tenant) {
        return new ServletPrincipalResolver(tenant);
    }
}
