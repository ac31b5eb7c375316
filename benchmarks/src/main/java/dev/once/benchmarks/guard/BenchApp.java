package dev.once.benchmarks.guard;

import dev.once.guard.MutationContext;
import dev.once.guard.web.Idempotent;
import dev.once.outbox.OutboxEvent;
import dev.once.outbox.OutboxWriter;
import java.net.URI;
import java.util.Map;
import java.util.UUID;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * One POST endpoint three ways: without an outbox row, unguarded (business row + outbox row in one transaction) and {@link Idempotent} (the same
 * writes inside the guard). Everything else is identical, so the difference is the guard's cost.
 */
@SpringBootApplication
public class BenchApp {

    static final String INSERT_ACCOUNT = "INSERT INTO bench_account (id, tenant_id, name) VALUES (?, ?, ?)";

    @Bean
    SecurityFilterChain api(HttpSecurity http) throws Exception {
        return http.authorizeHttpRequests(a -> a.anyRequest().authenticated()).httpBasic(Customizer.withDefaults())
                .csrf(c -> c.disable()).build();
    }

    @Bean
    UserDetailsService users() {
        return new InMemoryUserDetailsManager(User.withUsername("bench").password("bench-pass")
                .authorities("TENANT_acme").build());
    }

    /** Plain-text demo passwords: a benchmark must not measure BCrypt (Spring Security upgrades {noop} to it). */
    @Bean
    @SuppressWarnings("deprecation")
    org.springframework.security.crypto.password.PasswordEncoder passwordEncoder() {
        return org.springframework.security.crypto.password.NoOpPasswordEncoder.getInstance();
    }

    public record CreateAccount(String name) {
    }

    @RestController
    static class Accounts {

        private final JdbcTemplate jdbc;
        private final OutboxWriter outbox;

        Accounts(JdbcTemplate jdbc, OutboxWriter outbox) {
            this.jdbc = jdbc;
            this.outbox = outbox;
        }

        /** The business transaction alone, for the outbox's cost at the endpoint. */
        @Transactional
        @PostMapping("/plain/accounts")
        public ResponseEntity<Map<String, Object>> plain(@RequestBody CreateAccount body) {
            UUID id = UUID.randomUUID();
            jdbc.update(INSERT_ACCOUNT, id, "acme", body.name());
            return created(id, body);
        }

        @Transactional
        @PostMapping("/unguarded/accounts")
        public ResponseEntity<Map<String, Object>> unguarded(@RequestBody CreateAccount body) {
            UUID id = UUID.randomUUID();
            jdbc.update(INSERT_ACCOUNT, id, "acme", body.name());
            outbox.append(event(id, body));
            return created(id, body);
        }

        @Idempotent
        @PostMapping("/guarded/accounts")
        public ResponseEntity<Map<String, Object>> guarded(@RequestBody CreateAccount body, MutationContext ctx) {
            UUID id = UUID.randomUUID();
            jdbc.update(INSERT_ACCOUNT, id, "acme", body.name());
            ctx.append(event(id, body));
            return created(id, body);
        }

        private static OutboxEvent event(UUID id, CreateAccount body) {
            return OutboxEvent.builder().tenantId("acme").actorId("bench").aggregate("account", id.toString())
                    .type("AccountCreated", 1).payloadJson("{\"id\":\"" + id + "\",\"name\":\"" + body.name() + "\"}").build();
        }

        private static ResponseEntity<Map<String, Object>> created(UUID id, CreateAccount body) {
            return ResponseEntity.created(URI.create("/accounts/" + id))
                    .body(Map.of("id", id.toString(), "name", body.name(), "tenant_id", "acme"));
        }
    }
}
