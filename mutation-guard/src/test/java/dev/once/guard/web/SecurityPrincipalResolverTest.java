package dev.once.guard.web;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.security.authentication.TestingAuthenticationToken;
import org.springframework.security.core.context.SecurityContextHolder;

class SecurityPrincipalResolverTest {

    final SecurityPrincipalResolver resolver = new SecurityPrincipalResolver("TENANT_", "default");

    @AfterEach
    void clear() {
        SecurityContextHolder.clearContext();
    }

    private static void authenticate(String user, String... authorities) {
        TestingAuthenticationToken token = new TestingAuthenticationToken(user, "secret", authorities);
        token.setAuthenticated(true);
        SecurityContextHolder.getContext().setAuthentication(token);
    }

    @Test
    void the_tenant_comes_from_the_one_tenant_authority() {
        authenticate("alice", "ROLE_USER", "TENANT_acme");

        assertThat(resolver.resolve(null)).hasValue(new IdempotencyPrincipal("acme", "alice"));
    }

    @Test
    void a_user_with_several_tenants_is_refused_rather_than_scoped_by_chance() {
        authenticate("mallory", "TENANT_acme", "TENANT_globex");

        assertThat(resolver.resolve(null)).isEmpty();
    }

    @Test
    void the_same_tenant_granted_twice_is_one_tenant_and_a_bare_prefix_names_none() {
        authenticate("alice", "TENANT_acme", "TENANT_", "TENANT_acme");

        assertThat(resolver.resolve(null)).hasValue(new IdempotencyPrincipal("acme", "alice"));
    }

    @Test
    void without_a_tenant_authority_the_configured_default_applies_and_an_empty_default_refuses() {
        authenticate("ops", "ROLE_OPS");

        assertThat(resolver.resolve(null)).hasValue(new IdempotencyPrincipal("default", "ops"));
        assertThat(new SecurityPrincipalResolver("TENANT_", "").resolve(null)).isEmpty();
    }

    @Test
    void nobody_is_authenticated_without_an_authentication() {
        assertThat(resolver.resolve(null)).isEmpty();
    }
}
