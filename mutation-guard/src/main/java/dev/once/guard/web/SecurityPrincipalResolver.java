package dev.once.guard.web;

import jakarta.servlet.http.HttpServletRequest;
import java.util.Optional;
import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.context.SecurityContextHolder;

/**
 * The default with Spring Security: the user is the authenticated {@link Authentication}'s name, and the tenant is
 * its one authority that starts with the configured prefix ({@code TENANT_acme} is tenant {@code acme}), else the
 * configured default tenant (empty refuses users without a tenant). A user with several tenant authorities is
 * refused, never scoped by chance. Anonymous requests have no principal.
 */
final class SecurityPrincipalResolver implements IdempotencyPrincipalResolver {

    private final String tenantAuthorityPrefix;
    private final String defaultTenant;

    SecurityPrincipalResolver(String tenantAuthorityPrefix, String defaultTenant) {
        this.tenantAuthorityPrefix = tenantAuthorityPrefix;
        this.defaultTenant = defaultTenant;
    }

    @Override
    public Optional<IdempotencyPrincipal> resolve(HttpServletRequest request) {
        return principalOf(SecurityContextHolder.getContext().getAuthentication());
    }

    /** The tenant and user of {@code auth}, as above: a servlet request's, or a WebFlux exchange's principal. */
    public Optional<IdempotencyPrincipal> principalOf(Authentication auth) {
        if (auth == null || !auth.isAuthenticated() || auth instanceof AnonymousAuthenticationToken) {
            return Optional.empty();
        }
        String found = null; // a loop, not a stream: this runs on every guarded request
        for (GrantedAuthority authority : auth.getAuthorities()) {
            String a = authority.getAuthority();
            if (a == null || !a.startsWith(tenantAuthorityPrefix) || a.length() == tenantAuthorityPrefix.length()) {
                continue;
            }
            String tenant = a.substring(tenantAuthorityPrefix.length());
            if (found != null && !found.equals(tenant)) {
                return Optional.empty(); // ambiguous: a retry could land in another tenant's scope; refused (403)
            }
            found = tenant;
        }
        String tenant = found == null ? defaultTenant : found;
        return tenant == null || tenant.isEmpty() ? Optional.empty()
                : Optional.of(new IdempotencyPrincipal(tenant, auth.getName()));
    }
}
