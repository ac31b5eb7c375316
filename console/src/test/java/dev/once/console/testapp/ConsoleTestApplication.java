package dev.once.console.testapp;

import dev.once.dispatch.HandlerRegistration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * A service with the console: its own API behind HTTP Basic, a viewer and an operator, and two LEASED handlers that
 * call a "mail service" the tests can take down ({@link #MAIL_DOWN}) and an "invoicer" that always fails.
 */
@SpringBootApplication
public class ConsoleTestApplication {

    /** While set, the mailer's dependency is down and every call fails. */
    public static final AtomicBoolean MAIL_DOWN = new AtomicBoolean();

    public static void main(String[] args) {
        SpringApplication.run(ConsoleTestApplication.class, args);
    }

    @Bean
    SecurityFilterChain api(HttpSecurity http) throws Exception {
        return http.authorizeHttpRequests(a -> a.anyRequest().authenticated()).httpBasic(Customizer.withDefaults())
                .build();
    }

    @Bean
    UserDetailsService users() {
        return new InMemoryUserDetailsManager(
                User.withUsername("viewer").password("{noop}viewer-pass").authorities("ONCE_VIEWER").build(),
                User.withUsername("ops").password("{noop}ops-pass").authorities("ONCE_OPERATOR").build(),
                User.withUsername("alice").password("{noop}alice-pass").authorities("TENANT_acme").build());
    }

    @Bean
    HandlerRegistration mailer(JdbcTemplate jdbc) {
        return HandlerRegistration.leased("OrderPlaced", 1, "mailer", event -> {
            if (MAIL_DOWN.get()) {
                throw new IllegalStateException("mail service unavailable (503)");
            }
            jdbc.update("INSERT INTO mailed (event_id) VALUES (?) ON CONFLICT DO NOTHING", event.eventId());
        });
    }

    @Bean
    HandlerRegistration invoicer() {
        return HandlerRegistration.leased("InvoiceSent", 1, "invoicer", event -> {
            throw new IllegalArgumentException("no invoice template for " + event.tenantId());
        });
    }
}
