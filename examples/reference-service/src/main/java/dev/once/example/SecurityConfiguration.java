package dev.once.example;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetails;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.crypto.password.NoOpPasswordEncoder;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.firewall.RequestRejectedHandler;

/**
 * HTTP Basic with demo users. A user's tenant is its {@code TENANT_<id>} authority: that is where Once's guard (and
 * {@link Tenancy}) read it, never from a header the client controls. {@code ops} is an operator in no tenant, and
 * the console's operator ({@code ONCE_OPERATOR}, at {@code /once}); {@code viewer} may only look at the console.
 */
@Configuration(proxyBeanMethods = false)
class SecurityConfiguration {

    static final String OPS = "OPS";

    @Bean
    SecurityFilterChain api(HttpSecurity http) throws Exception {
        return http
                .authorizeHttpRequests(a -> a
                        .requestMatchers("/actuator/health", "/actuator/health/**").permitAll()
                        .requestMatchers("/ops/**", "/actuator/**").hasRole(OPS)
                        .anyRequest().authenticated())
                .httpBasic(Customizer.withDefaults())
                .csrf(c -> c.disable()) // a JSON API for non-browser clients, authenticated on every request
                .sessionManagement(s -> s.sessionCreationPolicy(
                        org.springframework.security.config.http.SessionCreationPolicy.STATELESS))
                .build();
    }

    /**
     * Spring Security's firewall refuses requests whose headers or URL hold characters HTTP does not allow there
     * (e.g. raw non-ASCII bytes in an {@code Idempotency-Key}); they get a problem with code {@code REQUEST_REJECTED}
     * instead of the generic error page. The offending value is never echoed.
     */
    @Bean
    RequestRejectedHandler requestRejectedHandler() {
        return (request, response, rejected) -> {
            response.setStatus(400);
            response.setContentType("application/problem+json");
            response.getWriter().write("""
                    {"type":"about:blank","title":"Bad Request","status":400,\
                    "detail":"The request was rejected: a header or the URL holds characters that are not allowed.",\
                    "code":"REQUEST_REJECTED"}""");
        };
    }

    @Bean
    UserDetailsService users() {
        return new InMemoryUserDetailsManager(
                tenantUser("alice", "acme"), tenantUser("bob", "acme"), tenantUser("carol", "globex"),
                User.withUsername("ops").password("ops-pass").authorities("ROLE_" + OPS, "ONCE_OPERATOR").build(),
                User.withUsername("viewer").password("viewer-pass").authorities("ONCE_VIEWER").build());
    }

    private static UserDetails tenantUser(String name, String tenant) {
        return User.withUsername(name).password(name + "-pass").authorities("TENANT_" + tenant).build();
    }

    /**
     * Demo passwords are plain text. A real service keeps hashes (and usually another authentication altogether);
     * here BCrypt would only make every demo request slower.
     */
    @Bean
    @SuppressWarnings("deprecation")
    PasswordEncoder passwordEncoder() {
        return NoOpPasswordEncoder.getInstance();
    }
}
