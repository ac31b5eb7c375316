package dev.once.example.guard;

import dev.once.guard.web.Idempotent;
import java.net.URI;
import java.util.Map;
import java.util.UUID;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** A money transfer: a retried POST with the same Idempotency-Key transfers once and replays the first answer. */
@RestController
public class Transfers {

    private final JdbcTemplate jdbc;

    public Transfers(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Idempotent
    @PostMapping("/transfers")
    public ResponseEntity<Map<String, Object>> transfer(@RequestBody Map<String, Object> body) {
        UUID id = UUID.randomUUID();
        long amount = ((Number) body.get("amount_cents")).longValue();
        jdbc.update("INSERT INTO transfer (id, amount_cents) VALUES (?, ?)", id, amount);
        return ResponseEntity.created(URI.create("/transfers/" + id)).body(Map.of("id", id.toString(),
                "amount_cents", amount));
    }
}
