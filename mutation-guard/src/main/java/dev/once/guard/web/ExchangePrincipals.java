package dev.once.guard.web;

import java.security.Principal;
import java.util.Optional;
import java.util.function.Function;
import org.springframework.util.ClassUtils;

/** Principals with and without Spring Security; its classes are touched only when it is present. */
final class ExchangePrincipals {

    static final boolean SECURITY = ClassUtils.isPresent(
            "org.springframework.security.core.Authentication", ExchangePrincipals.class.getClassLoader());

    private ExchangePrincipals() {
    }

    /** Whether {@code principal} is an authenticated user rather than Spring Security's anonymous one. */
    static boolean authenticated(Principal principal) {
        return !SECURITY || Security.authenticated(principal);
    }

    static Function<Principal, Optional<IdempotencyPrincipal>> security(String prefix, String defaultTenant) {
        return Security.tenancy(new SecurityPrincipalResolver(prefix, defaultTenant), defaultTenant);
    }

    /** Spring Security's side. */
    private static final class Security {
        private Security() {
        }

        static boolean authenticated(Principal principal) {
            return !(principal instanceof org.springframework.security.authentication.AnonymousAuthenticationToken);
        }

        static Function<Principal, Optional<IdempotencyPrincipal>> tenancy(SecurityPrincipalResolver resolver,
                                                                          String defaultTenant) {
            return principal -> principal instanceof org.springframework.security.core.Authentication auth
                    ? resolver.principalOf(auth)
                    : defaultTenant == null || defaultTenant.isEmpty() ? Optional.empty()
                            : Optional.of(new IdempotencyPrincipal(defaultTenant, principal.getName()));
        }
    }
}
