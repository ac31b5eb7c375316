package dev.once.guard.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.guard.IdempotencyPolicy;
import dev.once.guard.InProgressBehaviour;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.aop.support.AopUtils;
import org.springframework.http.ResponseEntity;

/** An {@code @Idempotent} route's attributes become its policy; blank attributes take the configured defaults. */
class RoutePoliciesTest {

    static final IdempotencyPolicy CONFIGURED = IdempotencyPolicy.custom().lease(Duration.ofSeconds(20))
            .ttl(Duration.ofHours(2)).transientStatuses(Set.of(503)).build();

    @SuppressWarnings("unused")
    static class Routes {

        @Idempotent
        void plain() {
        }

        @Idempotent(lease = "5s", ttl = "1h", retryFailed = true, durableClaim = true, inProgress = InProgressBehaviour.WAIT,
                waitMax = "3s", transientStatuses = {429})
        void tuned() {
        }

        @Idempotent(lease = "soon")
        void badLease() {
        }

        @Idempotent(lease = "2h", ttl = "1h")
        void leaseLongerThanTtl() {
        }
    }

    @SuppressWarnings("unused")
    static class Misdeclared {

        @Idempotent
        void returnsNothing() {
        }
    }

    @SuppressWarnings("unused")
    static class Mistyped {

        @Idempotent(lease = "soon")
        ResponseEntity<String> create() {
            return ResponseEntity.ok("created");
        }
    }

    @SuppressWarnings("unused")
    static class WellDeclared {

        @Idempotent(lease = "5s", ttl = "1h")
        ResponseEntity<String> create() {
            return ResponseEntity.ok("created");
        }

        ResponseEntity<String> undeclared() {
            return ResponseEntity.ok("read");
        }
    }

    final RoutePolicies policies = new RoutePolicies(CONFIGURED);

    @Test
    void a_route_that_cannot_work_is_refused_when_spring_builds_its_bean_not_on_its_first_request() {
        IdempotentRoutes advisor = new IdempotentRoutes(() -> {
            throw new AssertionError("the guard's collaborators are not needed to check a declaration");
        });

        assertThatThrownBy(() -> AopUtils.canApply(advisor, Misdeclared.class)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Misdeclared.returnsNothing must return ResponseEntity");
        assertThatThrownBy(() -> AopUtils.canApply(advisor, Mistyped.class)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease = \"soon\"");
        assertThat(AopUtils.canApply(advisor, WellDeclared.class)).isTrue();
        assertThat(AopUtils.canApply(advisor, RoutePoliciesTest.class)).as("no @Idempotent method: not advised").isFalse();
    }

    @Test
    void a_plain_route_takes_the_configured_defaults_and_claims_asynchronously() {
        IdempotencyPolicy policy = policyOf("plain");

        assertThat(policy.claimPolicy().lease()).isEqualTo(Duration.ofSeconds(20));
        assertThat(policy.claimPolicy().ttl()).isEqualTo(Duration.ofHours(2));
        assertThat(policy.claimPolicy().retryFailed()).isFalse();
        assertThat(policy.claimPolicy().durable()).isFalse();
        assertThat(policy.transientStatuses()).containsExactly(503);
        assertThat(policy.inProgress()).isEqualTo(InProgressBehaviour.REJECT);
    }

    @Test
    void a_route_overrides_each_attribute_it_names() {
        IdempotencyPolicy policy = policyOf("tuned");

        assertThat(policy.claimPolicy().lease()).isEqualTo(Duration.ofSeconds(5));
        assertThat(policy.claimPolicy().ttl()).isEqualTo(Duration.ofHours(1));
        assertThat(policy.claimPolicy().retryFailed()).isTrue();
        assertThat(policy.claimPolicy().durable()).isTrue();
        assertThat(policy.inProgress()).isEqualTo(InProgressBehaviour.WAIT);
        assertThat(policy.waitMax()).isEqualTo(Duration.ofSeconds(3));
        assertThat(policy.transientStatuses()).containsExactly(429);
    }

    @Test
    void a_bad_attribute_is_refused_with_a_message_naming_the_method() {
        assertThatThrownBy(() -> policyOf("badLease")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lease = \"soon\"").hasMessageContaining("Routes.badLease");
        assertThatThrownBy(() -> policyOf("leaseLongerThanTtl")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Routes.leaseLongerThanTtl").hasMessageContaining("must be longer than lease");
    }

    private IdempotencyPolicy policyOf(String name) {
        try {
            Method method = Routes.class.getDeclaredMethod(name);
            return policies.policyFor(method, method.getAnnotation(Idempotent.class));
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(e);
        }
    }
}
