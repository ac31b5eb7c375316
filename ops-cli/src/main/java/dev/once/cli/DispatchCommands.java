package dev.once.cli;

import dev.once.idempotency.ClaimPartitions;
import dev.once.idempotency.HandlerClaims;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code core dispatch …}: the Kafka handlers' claims, their retention, failed ones, and parked events. */
@Command(name = "dispatch", description = "Inspect and retry Kafka handlers' claims.",
        subcommands = {DispatchCommands.Claims.class, DispatchCommands.Partitions.class, DispatchCommands.Failed.class, DispatchCommands.Retry.class,
                ParkedCommands.class})
final class DispatchCommands {

    @Command(name = "claims", description = "Each handler's claims: how many, how many failed or are being handled, "
            + "how many are kept by row (undated) and the oldest day. Reads every claim.")
    static final class Claims implements Callable<Integer> {
        @Mixin Connection connection;
        @Spec CommandSpec spec;

        @Option(names = "--handler-key", description = "Only this handler")
        String handlerKey;

        @Option(names = "--json", description = "Print JSON")
        boolean json;

        @Override
        public Integer call() {
            List<HandlerClaims.HandlerRetention> handlers = HandlerClaims.create(connection.open()).retention(handlerKey);
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                Output.json(out, handlers.stream().map(h -> {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("route", h.route());
                    m.put("handler_key", h.handlerKey());
                    m.put("claims", h.claims());
                    m.put("failed", h.failed());
                    m.put("processing", h.processing());
                    m.put("undated", h.undated());
                    m.put("oldest_day", h.oldestDay() == null ? null : h.oldestDay().toString());
                    return m;
                }).toList());
            } else if (handlers.isEmpty()) {
                out.println("no handler claims");
            } else {
                Output.table(out, List.of("HANDLER", "CLAIMS", "FAILED", "PROCESSING", "UNDATED", "OLDEST DAY"),
                        handlers.stream().map(h -> List.of(h.route(), String.valueOf(h.claims()), String.valueOf(h.failed()),
                                String.valueOf(h.processing()), String.valueOf(h.undated()),
                                h.oldestDay() == null ? "-" : h.oldestDay().toString())).toList());
            }
            return 0;
        }
    }

    @Command(name = "partitions", description = "The day partitions of the handlers' claims: rows (the planner's "
            + "estimate), size, and when each is dropped; the undated partition first.")
    static final class Partitions implements Callable<Integer> {
        @Mixin Connection connection;
        @Spec CommandSpec spec;

        @Option(names = "--claim-retention", defaultValue = "7d", converter = Durations.class,
                description = "The service's once.dispatcher.claim-retention (default ${DEFAULT-VALUE})")
        Duration retention;

        @Option(names = "--json", description = "Print JSON")
        boolean json;

        @Override
        public Integer call() {
            if (retention.isZero()) {
                throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--claim-retention must be positive");
            }
            ClaimPartitions partitions = ClaimPartitions.create(connection.open(),
                    ClaimPartitions.Options.ofDefaults().withRetention(retention));
            List<ClaimPartitions.Partition> all = partitions.partitions();
            ClaimPartitions.Partition next = all.stream().filter(p -> !p.undated())
                    .min(java.util.Comparator.comparingLong(ClaimPartitions.Partition::dropAtMillis)).orElse(null);
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                Map<String, Object> result = new LinkedHashMap<>();
                result.put("claim_retention", retention.toString());
                result.put("next_to_drop", next == null ? null : next.name());
                result.put("partitions", all.stream().map(p -> {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("name", p.name());
                    m.put("day", p.undated() ? null : p.date().toString());
                    m.put("rows", p.rows());
                    m.put("bytes", p.bytes());
                    m.put("drop_at", p.undated() ? null : Instant.ofEpochMilli(p.dropAtMillis()).toString());
                    m.put("due", !p.undated() && p.dropAtMillis() <= p.dbNowMillis());
                    m.put("detaching", p.detaching());
                    return m;
                }).toList());
                Output.json(out, result);
            } else if (all.isEmpty()) {
                out.println("no claim partitions: run Once's migrations");
            } else {
                Output.table(out, List.of("PARTITION", "DAY", "ROWS", "BYTES", "DROP AT"), all.stream().map(p -> List.of(
                        p.name(), p.undated() ? "undated" : p.date().toString(), String.valueOf(p.rows()),
                        String.valueOf(p.bytes()), p.undated() ? "by row" : Instant.ofEpochMilli(p.dropAtMillis())
                                + (p.dropAtMillis() <= p.dbNowMillis() ? " (due)" : ""))).toList());
                out.println("next to drop: " + (next == null ? "-" : next.name()));
            }
            return 0;
        }
    }

    @Command(name = "failed", description = "Failed handler claims, newest first.")
    static final class Failed implements Callable<Integer> {
        @Mixin Connection connection;
        @Spec CommandSpec spec;

        @Option(names = "--handler-key", description = "Only this handler")
        String handlerKey;

        @Option(names = "--limit", defaultValue = "100", converter = Counts.class,
                description = "At most this many, 1 to " + Counts.MAX + " (default ${DEFAULT-VALUE})")
        int limit;

        @Option(names = "--json", description = "Print JSON")
        boolean json;

        @Option(names = "--fail-on-findings", description = "Exit 1 when failed claims exist")
        boolean failOnFindings;

        @Override
        public Integer call() {
            List<HandlerClaims.FailedHandler> failed = HandlerClaims.create(connection.open()).failed(handlerKey, limit);
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                Output.json(out, failed.stream().map(f -> {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("event_id", f.eventId());
                    m.put("handler_key", f.handlerKey());
                    m.put("route", f.route());
                    m.put("tenant_id", f.tenantId());
                    m.put("actor_id", f.actorId());
                    m.put("attempts", f.attempts());
                    m.put("failed_at", f.failedAt().toString());
                    m.put("reason", f.reason());
                    return m;
                }).toList());
            } else if (failed.isEmpty()) {
                out.println("no failed handler claims");
            } else {
                Output.table(out, List.of("EVENT", "HANDLER", "TENANT", "FAILED AT", "REASON"), failed.stream().map(f ->
                        List.of(f.eventId(), f.handlerKey(), f.tenantId(), f.failedAt().toString(), String.valueOf(f.reason())))
                        .toList());
            }
            return failOnFindings && !failed.isEmpty() ? Core.FINDINGS : 0;
        }
    }

    @Command(name = "retry", description = "Let a failed handler run again on the event's next delivery or redrive.")
    static final class Retry implements Callable<Integer> {
        @Mixin Connection connection;
        @Spec CommandSpec spec;

        // A UUID: the dispatcher dead-letters an event whose id is not one, so no claim can have another form.
        @Option(names = "--event-id", required = true, converter = Uuids.class, description = "The event's id")
        UUID eventId;

        @Option(names = "--handler-key", required = true, description = "The handler's key")
        String handlerKey;

        @Mixin Confirmation confirmation;

        @Option(names = "--json", description = "Print JSON")
        boolean json;

        @Override
        public Integer call() {
            confirmation.require("retry", "changes data");
            int rows = HandlerClaims.create(connection.open()).retry(eventId.toString(), handlerKey,
                    confirmation.operator());
            IdempotencyCommands.print(spec.commandLine().getOut(), json, Map.of("released", rows),
                    rows == 0 ? "no failed claim of " + handlerKey + " for event " + eventId
                            : "handler " + handlerKey + " will run again on the next delivery of " + eventId);
            return rows == 0 ? Core.FINDINGS : 0;
        }
    }

    private DispatchCommands() {
    }
}
