package dev.once.console;

import dev.once.OnceException;
import dev.once.audit.Operator;
import dev.once.audit.OperatorAudit;
import dev.once.idempotency.ClaimPartitions;
import dev.once.idempotency.IdempotencyOperations;
import dev.once.idempotency.IdempotencyScope;
import dev.once.idempotency.ParkedEvents;
import dev.once.idempotency.ReleaseResult;
import dev.once.idempotency.Route;
import dev.once.outbox.OutboxOperations;
import java.security.Principal;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The console's JSON API under {@code <once.console.path>/api}, for its pages and for scripts, with the same security:
 * reads for viewers and operators, actions ({@code POST}, with a CSRF token) for operators only. Every action goes
 * through the operator API {@code core} uses, and is recorded in the operator audit with the principal's name and the
 * reason given, in the same transaction as its effect. Bad input is a {@code problem+json} with a stable {@code code}.
 */
@RestController
@RequestMapping("${once.console.path:" + Console.PATH + "}/api")
final class ConsoleController {

    static final int MAX_LIST = 1_000;

    private final Overview overview;
    private final MeterHistory history;
    private final OutboxOperations outbox;
    private final ParkedEvents parked;
    private final IdempotencyOperations records;
    private final OperatorAudit audit;
    private final String operatorAuthority;

    private final ClaimPartitions partitions;

    /**
     * The API over {@code dataSource}; {@code partitions} is the dispatcher's when this service runs one (its claim
     * retention decides when a day is dropped), else one with the defaults, read only.
     */
    public ConsoleController(DataSource dataSource, Overview overview, MeterHistory history, String operatorAuthority,
                             ClaimPartitions partitions) {
        this.partitions = partitions;
        this.overview = overview;
        this.history = history;
        this.outbox = OutboxOperations.create(dataSource);
        this.parked = ParkedEvents.create(dataSource);
        this.records = IdempotencyOperations.create(dataSource);
        this.audit = OperatorAudit.create(dataSource);
        this.operatorAuthority = operatorAuthority;
    }

    @GetMapping("/me")
    public Map<String, Object> me(org.springframework.security.core.Authentication user) {
        boolean operator = user.getAuthorities().stream().anyMatch(a -> operatorAuthority.equals(a.getAuthority()));
        return Map.of("name", user.getName(), "operator", operator);
    }

    @GetMapping("/overview")
    public Map<String, Object> overview() {
        return overview.read();
    }

    @GetMapping("/series")
    public Map<String, Object> series() {
        return history == null ? Map.of("t", List.of()) : history.series();
    }

    @GetMapping("/failures")
    public List<Map<String, Object>> failures(@RequestParam Map<String, String> query) {
        return parked.failureGroups(filter(query), limit(query)).stream().map(g -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("handler_key", g.handlerKey());
            m.put("fingerprint", g.fingerprint());
            m.put("exception_class", g.exceptionClass());
            m.put("message", g.message());
            m.put("events", g.events());
            m.put("keys", g.keys());
            m.put("first_failed_at", String.valueOf(g.firstFailedAt()));
            m.put("last_failed_at", String.valueOf(g.lastFailedAt()));
            m.put("tenants", g.tenants());
            return m;
        }).toList();
    }

    @GetMapping("/parked")
    public List<Map<String, Object>> parked(@RequestParam Map<String, String> query) {
        return parked.list(filter(query), limit(query)).stream().map(ParkedEvents.ParkedEvent::toMap).toList();
    }

    /** The dry run: what a retry and an abandon of this filter would take. */
    @GetMapping("/parked/count")
    public Map<String, Object> count(@RequestParam Map<String, String> query) {
        ParkedEvents.Counts counts = parked.count(filter(query));
        return Map.of("would_retry", counts.retriable(), "would_abandon", counts.abandonable());
    }

    @GetMapping("/outbox/parked")
    public List<Map<String, Object>> outboxParked(@RequestParam Map<String, String> query) {
        return outbox.parked(limit(query)).stream().map(OutboxOperations.Parked::toMap).toList();
    }

    @GetMapping("/records/stuck")
    public List<Map<String, Object>> stuck(@RequestParam Map<String, String> query) {
        Duration olderThan = duration(query.getOrDefault("older_than", "PT5M"), "older_than");
        return records.findStuck(olderThan, blankToNull(query.get("tenant_id")), limit(query)).stream().map(r -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("tenant_id", r.scope().tenantId());
            m.put("user_id", r.scope().userId());
            m.put("route", r.scope().route().value());
            m.put("idempotency_key", r.scope().key().value());
            m.put("claimed_at", String.valueOf(r.claimedAt()));
            m.put("locked_until", String.valueOf(r.lockedUntil()));
            m.put("age_seconds", r.age().toSeconds());
            return m;
        }).toList();
    }

    /** The diagnose view of one key; the stored response's body is left out (operators use {@code core}). */
    @GetMapping("/records/diagnose")
    public Map<String, Object> diagnose(@RequestParam Map<String, String> query) {
        Map<String, Object> diagnosis = new LinkedHashMap<>(records.diagnose(scope(query), null).toMap());
        diagnosis.remove("response_body");
        diagnosis.remove("response_body_encoding");
        return diagnosis;
    }

    /** The handler claims' partitions: one a day, the undated one, their rows (estimated) and when each is dropped. */
    @GetMapping("/partitions")
    public List<Map<String, Object>> partitions() {
        return partitions.partitions().stream().map(p -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", p.name());
            m.put("day", p.undated() ? "undated" : String.valueOf(p.date()));
            m.put("rows", p.rows());
            m.put("bytes", p.bytes());
            m.put("detaching", p.detaching());
            m.put("drop_at", p.dropAtMillis() < 0 ? null : java.time.Instant.ofEpochMilli(p.dropAtMillis()).toString());
            return m;
        }).toList();
    }

    @GetMapping("/audit")
    public List<Map<String, Object>> audit(@RequestParam Map<String, String> query) {
        return audit.recent(limit(query)).stream().map(OperatorAudit.Entry::toMap).toList();
    }

    @PostMapping("/parked/retry")
    public Map<String, Object> retry(@RequestBody Map<String, String> body, Principal user) {
        return Map.of("retried", parked.retry(filter(body), operator(user, body)));
    }

    @PostMapping("/parked/abandon")
    public Map<String, Object> abandon(@RequestBody Map<String, String> body, Principal user) {
        return Map.of("abandoned", parked.abandon(filter(body), operator(user, body)));
    }

    @PostMapping("/outbox/redrive")
    public Map<String, Object> redrive(@RequestBody Map<String, String> body, Principal user) {
        return Map.of("requeued", outbox.redrive(uuid(body.get("event_id"), "event_id"), operator(user, body)));
    }

    @PostMapping("/records/release")
    public Map<String, Object> release(@RequestBody Map<String, String> body, Principal user) {
        ReleaseResult result = records.forceRelease(scope(body), Boolean.parseBoolean(body.get("force")),
                operator(user, body));
        return Map.of("result", result.name().toLowerCase());
    }

    @ExceptionHandler(BadInput.class)
    ResponseEntity<ProblemDetail> badInput(BadInput e) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, e.getMessage());
        problem.setTitle("Bad Request");
        problem.setProperty("code", e.code);
        return ResponseEntity.badRequest().contentType(org.springframework.http.MediaType.APPLICATION_PROBLEM_JSON)
                .body(problem);
    }

    /** An action needs a reason: the console asks for one, and the audit keeps it. */
    private static Operator operator(Principal user, Map<String, String> body) {
        String reason = body.get("reason");
        if (reason == null || reason.isBlank()) {
            throw new BadInput("REASON_REQUIRED", "an action needs a reason: send \"reason\", it is kept in the audit");
        }
        if (reason.length() > Operator.MAX_REASON) {
            throw new BadInput("REASON_TOO_LONG", "reason is at most " + Operator.MAX_REASON + " characters");
        }
        return new Operator(user.getName(), Operator.CONSOLE, reason);
    }

    private static ParkedEvents.Filter filter(Map<String, String> query) {
        String age = blankToNull(query.get("older_than"));
        return new ParkedEvents.Filter(blankToNull(query.get("group")), blankToNull(query.get("handler_key")),
                blankToNull(query.get("event_type")), blankToNull(query.get("tenant_id")),
                blankToNull(query.get("failure")), age == null ? null : duration(age, "older_than"));
    }

    private static IdempotencyScope scope(Map<String, String> query) {
        try {
            return IdempotencyScope.of(query.get("tenant_id"), query.get("user_id"), Route.of(query.get("route")),
                    query.get("idempotency_key"));
        } catch (OnceException | IllegalArgumentException | NullPointerException e) {
            throw new BadInput("INVALID_SCOPE", "tenant_id, user_id, route and idempotency_key name one record: "
                    + e.getMessage());
        }
    }

    private static int limit(Map<String, String> query) {
        String value = query.getOrDefault("limit", "100");
        try {
            int limit = Integer.parseInt(value);
            if (limit >= 1 && limit <= MAX_LIST) {
                return limit;
            }
        } catch (NumberFormatException e) {
            // refused below
        }
        throw new BadInput("INVALID_LIMIT", "limit is a whole number from 1 to " + MAX_LIST);
    }

    /** ISO-8601 ({@code PT1H}) or a number and a unit ({@code 90s}, {@code 5m}, {@code 1h}, {@code 2d}). */
    static Duration duration(String value, String name) {
        try {
            if (value.matches("\\d{1,9}[smhd]")) {
                long n = Long.parseLong(value.substring(0, value.length() - 1));
                return switch (value.charAt(value.length() - 1)) {
                    case 's' -> Duration.ofSeconds(n);
                    case 'm' -> Duration.ofMinutes(n);
                    case 'h' -> Duration.ofHours(n);
                    default -> Duration.ofDays(n);
                };
            }
            Duration d = Duration.parse(value);
            if (!d.isNegative()) {
                return d;
            }
        } catch (DateTimeParseException e) {
            // refused below
        }
        throw new BadInput("INVALID_DURATION", name + " is a duration such as 90s, 5m, 1h, 2d or PT1H");
    }

    private static UUID uuid(String value, String name) {
        try {
            return UUID.fromString(value);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new BadInput("INVALID_ID", name + " is a UUID");
        }
    }

    private static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value;
    }

    /** Input the API refuses, with its stable code. */
    static final class BadInput extends OnceException {
        final String code;

        BadInput(String code, String message) {
            super(message);
            this.code = code;
        }
    }
}
