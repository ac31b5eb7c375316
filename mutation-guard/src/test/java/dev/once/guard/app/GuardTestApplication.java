package dev.once.guard.app;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/** A small service with guarded and unguarded routes, used by the HTTP contract tests and the benchmark. */
@SpringBootApplication
public class GuardTestApplication {

    /** Runs the application in a JVM of its own (the reliability suite's clock test). */
    public static void main(String[] args) {
        org.springframework.boot.SpringApplication.run(GuardTestApplication.class, args);
    }

    @Bean
    SecurityFilterChain api(HttpSecurity http) throws Exception {
        return http.authorizeHttpRequests(a -> a.anyRequest().authenticated())
                .httpBasic(Customizer.withDefaults())
                .csrf(c -> c.disable())
                .build();
    }

    @Bean
    io.micrometer.core.instrument.MeterRegistry meterRegistry() {
        return new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    }

    @Bean
    UserDetailsService users() {
        return new InMemoryUserDetailsManager(
                user("alice", "TENANT_acme"), user("bob", "TENANT_acme"), user("carol", "TENANT_globex"));
    }

    private static org.springframework.security.core.userdetails.UserDetails user(String name, String tenant) {
        return User.withUsername(name).password(name + "-pass").authorities(tenant).build();
    }

    /** Plain-text test passwords (Spring Security would otherwise upgrade {noop} to slow BCrypt after a login). */
    @Bean
    @SuppressWarnings("deprecation")
    org.springframework.security.crypto.password.PasswordEncoder passwordEncoder() {
        return org.springframework.security.crypto.password.NoOpPasswordEncoder.getInstance();
    }
}
