package dev.once.guard.web;

import jakarta.servlet.http.HttpServletRequest;
import java.util.Optional;
import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.context.SecurityContextHolder;

/**
 * The default with Spring Security: the user is the authenticated {@link Authentication}'s name, and the tenant is
 * its first authority that starts with the configured prefix ({@code TENANT_acme} is tenant {@code acme}), else the
 * configured default tenant. Anonymous requests have no principal.
 */
public final class SecurityPrincipalResolver implements IdempotencyPrincipalResolver {

    private final String tenantAuthorityPrefix;
    private final String defaultTenant;

    public SecurityPrincipalResolver(String tenantAuthorityPrefix, String defaultTenant) {
        this.tenantAuthorityPrefix = tenantAuthorityPrefix;
        this.defaultTenant = defaultTenant;
    }

    @Override
    public Optional<IdempotencyPrincipal> resolve(HttpServletRequest request) {
        Authentication auth = SecurityContextHolder.getContext().getAuthentication();
        if (auth == null || !auth.isAuthenticated() || auth instanceof AnonymousAuthenticationToken) {
            return Optional.empty();
        }
        String tenant = auth.getAuthorities().stream().map(GrantedAuthority::getAuthority)
                .filter(a -> a != null && a.startsWith(tenantAuthorityPrefix) && a.length() > tenantAuthorityPrefix.length())
                .map(a -> a.substring(tenantAuthorityPrefix.length()))
                .findFirst().orElse(defaultTenant);
        return tenant == null ? Optional.empty() : Optional.of(new IdempotencyPrincipal(tenant, auth.getName()));
    }
}
