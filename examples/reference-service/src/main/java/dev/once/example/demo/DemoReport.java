package dev.once.example.demo;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The demo's result. The invariants: {@code duplicates == 0} (no logical request took effect twice, no handler ran
 * twice for one event), {@code lost == 0} (every acknowledged request is there and every committed event was
 * handled by each of its handlers), {@code halfWritten == 0} (no event without its business row, no row without its
 * event), every key reused with another body got 422, and every operation finished.
 *
 * @param unanswered requests that got no answer (a client timeout or a connection error) and were retried
 * @param effects per handler: effects added during the run
 * @param absorbedAttempts repeated attempts of a LEASED handler with the same derived key (after a crash), which
 *        the receiving side deduplicates: not duplicates, but counted
 * @param failures what broke an invariant, in words; empty when the demo passed
 */
public record DemoReport(long operations, long requests, long created, long replayed, long inProgress409,
                         long conflicts422, long unanswered, long concurrentBursts, Map<String, Long> effects,
                         long absorbedAttempts, long duplicates, long lost, long halfWritten, long crossTenantLeaks,
                         List<String> failures) {

    public boolean passed() {
        return failures.isEmpty();
    }

    /** The report as printed at the end of the demo. */
    public String table() {
        Map<String, Object> rows = new LinkedHashMap<>();
        rows.put("operations (logical requests)", operations);
        rows.put("HTTP requests", requests);
        rows.put("created", created);
        rows.put("replayed (Idempotent-Replayed: true)", replayed);
        rows.put("409 in progress", inProgress409);
        rows.put("422 key reused with another body", conflicts422);
        rows.put("no answer: timeouts, connection errors (retried)", unanswered);
        rows.put("concurrent duplicate bursts", concurrentBursts);
        effects.forEach((handler, n) -> rows.put("effects: " + handler, n));
        rows.put("re-sends absorbed by derived key", absorbedAttempts);
        rows.put("cross-tenant leaks", crossTenantLeaks);
        rows.put("half-written (event xor row)", halfWritten);
        rows.put("DUPLICATES", duplicates);
        rows.put("LOST", lost);
        StringBuilder out = new StringBuilder("\n  Once demo report\n  ----------------\n");
        rows.forEach((name, value) -> out.append(String.format("  %-40s %10s%n", name, value)));
        out.append(passed() ? "  verdict: PASS (nothing lost, nothing done twice)\n" : "  verdict: FAIL\n");
        failures.forEach(f -> out.append("    - ").append(f).append('\n'));
        return out.toString();
    }
}
