package dev.once.cli;

import dev.once.outbox.OutboxOperations;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code core outbox …}: the outbox as the relays see it. */
@Command(name = "outbox", description = "Watch the transactional outbox.",
        subcommands = {OutboxCommands.Status.class, OutboxCommands.Redrive.class})
final class OutboxCommands {

    @Command(name = "status", description = "Pending rows, the oldest pending age, parked rows and their reasons, "
            + "and the replication slot that relays the outbox from the WAL (CDC relay or Kafka Connect): its state, "
            + "and its lag in bytes and in time.")
    static final class Status implements Callable<Integer> {
        @Mixin Connection connection;
        @Spec CommandSpec spec;

        @Option(names = "--slot", description = "Replication slot that relays the outbox (default: the one its "
                + "watermarks were taken for)")
        String slot;

        @Option(names = "--max-slot-lag", defaultValue = "2m", converter = Durations.class,
                description = "A slot that confirmed nothing for longer is a finding (default ${DEFAULT-VALUE})")
        java.time.Duration maxSlotLag;

        @Option(names = "--parked-limit", defaultValue = "20", converter = Counts.class,
                description = "Parked rows to list, 1 to " + Counts.MAX + " (default ${DEFAULT-VALUE})")
        int parkedLimit;

        @Option(names = "--json", description = "Print JSON")
        boolean json;

        @Option(names = "--fail-on-findings", description = "Exit 1 when rows are parked, or the slot has a problem")
        boolean failOnFindings;

        @Override
        public Integer call() {
            OutboxOperations status = OutboxOperations.create(connection.open());
            Map<String, Object> fields = new LinkedHashMap<>();
            fields.put("pending", status.pending());
            fields.put("oldest_pending_age_seconds", status.oldestPendingAge().toSeconds());
            fields.put("parked", status.parkedCount());
            List<OutboxOperations.Parked> parked = status.parked(parkedLimit);
            String name = slot != null ? slot : status.slots().stream().findFirst().orElse(null);
            OutboxOperations.Slot s = name == null ? null : status.slot(name);
            String problem = s == null ? null : s.problem(maxSlotLag);
            fields.put("relay_mode", s == null ? "polling" : "cdc");
            fields.put("slot", s == null ? null : slot(s, problem));
            fields.put("parked_events", parked.stream().map(OutboxOperations.Parked::toMap).toList());
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                Output.json(out, fields);
            } else {
                Map<String, Object> summary = new LinkedHashMap<>(fields);
                summary.remove("parked_events");
                summary.put("slot", s == null ? "none (polling relay)" : s.name() + " " + s.state() + ", lag "
                        + s.lagBytes() + " bytes" + (s.lag() == null ? "" : ", " + Durations.human(s.lag())));
                if (problem != null) {
                    summary.put("slot_problem", problem);
                }
                summary.put("oldest_pending_age_seconds", Durations.human(status.oldestPendingAge()));
                Output.fields(out, summary);
                if (!parked.isEmpty()) {
                    out.println();
                    Output.table(out, List.of("EVENT", "AGGREGATE", "TYPE", "REASON"), parked.stream().map(p -> List.of(
                            p.id().toString(), p.aggregateType() + "/" + p.aggregateId(), p.eventType(), p.reason())).toList());
                }
            }
            return failOnFindings && (status.parkedCount() > 0 || problem != null) ? Core.FINDINGS : 0;
        }

        private static Map<String, Object> slot(OutboxOperations.Slot s, String problem) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", s.name());
            m.put("active", s.active());
            m.put("lag_bytes", s.lagBytes());
            m.put("state", s.state().name());
            m.put("wal_status", s.walStatus());
            m.put("lag_seconds", s.lag() == null ? null : s.lag().toSeconds());
            m.put("problem", problem);
            return m;
        }
    }

    @Command(name = "redrive", description = "Publish a parked event again, with the events parked behind it.")
    static final class Redrive implements Callable<Integer> {
        @Mixin Connection connection;
        @Spec CommandSpec spec;

        @Option(names = "--event-id", required = true, converter = Uuids.class, description = "The parked event's id")
        java.util.UUID eventId;

        @Mixin Confirmation confirmation;

        @Option(names = "--json", description = "Print JSON")
        boolean json;

        @Override
        public Integer call() {
            confirmation.require("redrive", "changes data");
            int rows = OutboxOperations.create(connection.open()).redrive(eventId, confirmation.operator());
            IdempotencyCommands.print(spec.commandLine().getOut(), json, Map.of("requeued", rows),
                    rows == 0 ? "event " + eventId + " is not parked; nothing to redrive"
                            : "requeued " + rows + " event(s) of its aggregate, in order");
            return rows == 0 ? Core.FINDINGS : 0;
        }
    }

    private OutboxCommands() {
    }
}
