package dev.once.example.guard;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * A service that guards one high-risk route and nothing else: {@code once-mutation-guard} with Spring MVC, JDBC and
 * Spring Security (tenant and user come from the authenticated principal), no Kafka, no Debezium.
 */
@SpringBootApplication
public class GuardOnlyApplication {

    public static void main(String[] args) {
        SpringApplication.run(GuardOnlyApplication.class, args);
    }

    /** HTTP Basic against an in-memory user: the example's stand-in for the service's real authentication. */
    @Bean
    SecurityFilterChain security(HttpSecurity http) throws Exception {
        return http.authorizeHttpRequests(requests -> requests.anyRequest().authenticated())
                .httpBasic(Customizer.withDefaults()).csrf(csrf -> csrf.disable()).build();
    }

    @Bean
    InMemoryUserDetailsManager users() {
        return new InMemoryUserDetailsManager(User.withUsername("alice").password("{noop}alice-password")
                .authorities("TENANT_acme").build());
    }
}
