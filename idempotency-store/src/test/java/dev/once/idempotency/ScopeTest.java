package dev.once.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ScopeTest {

    @Test
    void an_http_route_is_method_and_template() {
        assertThat(Route.http("post", "/accounts/{id}/files").value()).isEqualTo("POST /accounts/{id}/files");
    }

    @ParameterizedTest
    @ValueSource(strings = {"/accounts/42/files", "/files/8e03978e-40d5-43e8-bc93-6894a57f9324/complete",
            "/objects/0123456789abcdef0123"})
    void a_raw_path_with_an_identifier_is_not_a_route(String path) {
        assertThatThrownBy(() -> Route.http("POST", path))
                .isInstanceOfSatisfying(InvalidScopeException.class, e -> assertThat(e.field()).isEqualTo("route"))
                .hasMessageContaining("looks like a raw path");
    }

    @Test
    void a_handler_route_is_free_form() {
        assertThat(Route.of("AccountCreated:v1:account-projection").value()).isEqualTo("AccountCreated:v1:account-projection");
    }

    @Test
    void tenant_and_user_are_required_and_named_when_missing() {
        Route route = Route.http("POST", "/accounts");
        assertThatThrownBy(() -> IdempotencyScope.of("", "u", route, "k")).hasMessageContaining("tenant_id is missing");
        assertThatThrownBy(() -> IdempotencyScope.of("t", null, route, "k")).hasMessageContaining("user_id is missing");
        assertThatThrownBy(() -> IdempotencyScope.of("t", "u", route, "bad key")).isInstanceOf(IdempotencyKeyException.class);
    }

    @Test
    void a_policy_needs_a_ttl_longer_than_its_lease() {
        assertThatThrownBy(() -> ClaimPolicy.custom().lease(java.time.Duration.ofMinutes(5))
                .ttl(java.time.Duration.ofMinutes(1)).build())
                .hasMessageContaining("ttl (PT1M) must be longer than lease (PT5M)");
    }

    @Test
    void default_policy_uses_the_store_constants() {
        assertThat(ClaimPolicy.ofDefaults().lease()).isEqualTo(IdempotencyDefaults.LEASE).hasSeconds(30);
        assertThat(ClaimPolicy.ofDefaults().ttl()).isEqualTo(IdempotencyDefaults.TTL).hasHours(24);
        assertThat(ClaimPolicy.ofDefaults().retryFailed()).isFalse();
    }
}
