package dev.once.guard.web;

import java.security.Principal;
import java.util.Optional;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Finds the tenant and user of a WebFlux request from its <em>authenticated</em> principal, as
 * {@link IdempotencyPrincipalResolver} does on Spring MVC. Never take them from a header the client controls. An
 * empty result answers 401 without a principal, 403 with one.
 */
@FunctionalInterface
public interface ReactivePrincipalResolver {

    Mono<IdempotencyPrincipal> resolve(ServerWebExchange exchange);

    /**
     * The default: the exchange's principal; with Spring Security its {@code Authentication}, whose tenant is its one
     * authority that starts with {@code tenantAuthorityPrefix} (as {@link IdempotencyPrincipalResolver#fromSecurity}), else
     * {@code defaultTenant}; without it, the principal's name in {@code defaultTenant}.
     */
    static ReactivePrincipalResolver of(String tenantAuthorityPrefix, String defaultTenant) {
        java.util.function.Function<Principal, Optional<IdempotencyPrincipal>> tenancy = ExchangePrincipals.SECURITY
                ? ExchangePrincipals.security(tenantAuthorityPrefix, defaultTenant)
                : principal -> defaultTenant == null || defaultTenant.isEmpty() ? Optional.empty()
                        : Optional.of(new IdempotencyPrincipal(defaultTenant, principal.getName()));
        return exchange -> exchange.getPrincipal().flatMap(principal -> Mono.justOrEmpty(tenancy.apply(principal)));
    }
}
