package dev.once.example.ops;

import java.util.Map;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** Operator endpoints (role OPS, see {@code SecurityConfiguration}). */
@RestController
class OpsController {

    private final EffectsLedger ledger;

    OpsController(EffectsLedger ledger) {
        this.ledger = ledger;
    }

    @GetMapping("/ops/effects")
    Map<String, Object> effects() {
        return ledger.snapshot();
    }
}
