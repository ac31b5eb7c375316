package dev.once.benchmarks.guard;

import dev.once.guard.MutationContext;
import dev.once.guard.web.Idempotent;
import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.ClaimResult;
import dev.once.idempotency.ClaimToken;
import dev.once.idempotency.IdempotencyScope;
import dev.once.idempotency.IdempotencyStore;
import dev.once.idempotency.RequestFingerprint;
import dev.once.idempotency.Route;
import dev.once.idempotency.StoredResponse;
import dev.once.outbox.OutboxEvent;
import dev.once.outbox.OutboxWriter;
import dev.once.outbox.UuidV7;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
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
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * One POST endpoint four ways: without an outbox row, unguarded (business row + outbox row in one transaction),
 * {@link Idempotent} (the same writes inside the guard), and the guard's store calls made directly, without the guard
 * (the same statements, the floor of the guard's design). Everything else is identical, so the difference is the
 * guard's cost.
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

        private static final Route STORE_ONLY = Route.of("POST /store-only/accounts");
        private static final String STORE_ONLY_HASH = RequestFingerprint.of("POST", STORE_ONLY, "application/json",
                "{\"name\":\"Ada\"}".getBytes(StandardCharsets.UTF_8));

        private final JdbcTemplate jdbc;
        private final OutboxWriter outbox;
        private final IdempotencyStore store;
        private final TransactionTemplate work;

        Accounts(JdbcTemplate jdbc, OutboxWriter outbox, IdempotencyStore store, PlatformTransactionManager transactions) {
            this.jdbc = jdbc;
            this.outbox = outbox;
            this.store = store;
            this.work = new TransactionTemplate(transactions);
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

        /**
         * What the guard sends to PostgreSQL for a fresh key, with none of its Java: the claim outside a transaction,
         * then the business row with the outbox row and the completion sent with the commit. Its throughput is the
         * most any implementation of the guard's design (claim in its own transaction, work and completion in one)
         * could reach at this endpoint.
         */
        @PostMapping("/store-only/accounts")
        public ResponseEntity<Map<String, Object>> storeOnly(@RequestBody CreateAccount body,
                                                             @RequestHeader("Idempotency-Key") String key) {
            ClaimResult claim = store.claim(IdempotencyScope.of("acme", "bench", STORE_ONLY, key), STORE_ONLY_HASH,
                    ClaimPolicy.ofDefaults());
            ClaimToken token = ((ClaimResult.Claimed) claim).token();
            UUID id = UUID.randomUUID();
            ResponseEntity<Map<String, Object>> created = created(id, body);
            StoredResponse response = StoredResponse.of(201, "application/json",
                    ("{\"id\":\"" + id + "\",\"name\":\"" + body.name() + "\",\"tenant_id\":\"acme\"}")
                            .getBytes(StandardCharsets.UTF_8)).withHeader("Location", "/accounts/" + id);
            work.executeWithoutResult(tx -> {
                jdbc.update(INSERT_ACCOUNT, id, "acme", body.name());
                store.markSucceededAtCommit(token, response, null, List.of(event(id, body).withId(UuidV7.next())));
            });
            return created;
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
