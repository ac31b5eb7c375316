package dev.once.cli;

import dev.once.idempotency.ParkedEvents;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code core dispatch parked …}: events the dispatchers parked (a handler kept failing, or a version with no handler
 * yet) and the events of their keys behind them; retried or abandoned in bulk, a dry run first.
 */
@Command(name = "parked", description = "Events parked by the dispatchers, with their keys' later events.",
        subcommands = {ParkedCommands.ListParked.class, ParkedCommands.Retry.class, ParkedCommands.Abandon.class})
final class ParkedCommands {

    /** The criteria every parked command takes; each one left out matches everything. */
    static final class Criteria {
        @Option(names = "--group", description = "Only this consumer group (service)")
        String group;

        @Option(names = "--handler-key", description = "Only events whose failure names this handler")
        String handlerKey;

        @Option(names = "--event-type", description = "Only this event type")
        String eventType;

        @Option(names = "--tenant-id", description = "Only this tenant")
        String tenantId;

        @Option(names = "--failure", description = "Only this failure: its fingerprint or exception class")
        String failure;

        @Option(names = "--older-than", converter = Durations.class,
                description = "Only events that first failed (or parked) at least this long ago, e.g. 1h")
        Duration olderThan;

        ParkedEvents.Filter filter() {
            return new ParkedEvents.Filter(group, handlerKey, eventType, tenantId, failure, olderThan);
        }

        String describe() {
            Map<String, Object> set = new LinkedHashMap<>();
            set.put("group", group);
            set.put("handler-key", handlerKey);
            set.put("event-type", eventType);
            set.put("tenant-id", tenantId);
            set.put("failure", failure);
            set.put("older-than", olderThan);
            set.values().removeIf(java.util.Objects::isNull);
            return set.isEmpty() ? "all" : set.toString();
        }
    }

    @Command(name = "list", description = "Parked events, oldest first, each with why it is parked and its failure.")
    static final class ListParked implements Callable<Integer> {
        @Mixin Connection connection;
        @Mixin Criteria criteria;
        @Spec CommandSpec spec;

        @Option(names = "--limit", defaultValue = "100", converter = Counts.class,
                description = "At most this many, 1 to " + Counts.MAX + " (default ${DEFAULT-VALUE})")
        int limit;

        @Option(names = "--json", description = "Print JSON")
        boolean json;

        @Option(names = "--fail-on-findings", description = "Exit 1 when events are parked")
        boolean failOnFindings;

        @Override
        public Integer call() {
            List<ParkedEvents.ParkedEvent> events = ParkedEvents.create(connection.open()).list(criteria.filter(), limit);
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                Output.json(out, events.stream().map(ParkedCommands::fields).toList());
            } else if (events.isEmpty()) {
                out.println("no parked events");
            } else {
                Output.table(out, List.of("GROUP", "TOPIC", "KEY", "OFFSET", "EVENT TYPE", "STATUS", "REASON",
                        "ATTEMPTS", "FAILURE"), events.stream().map(e -> List.of(e.groupId(), e.topic() + "-"
                        + e.partition(), String.valueOf(e.recordKey()), String.valueOf(e.offset()),
                        e.eventType() + " v" + e.eventVersion(), e.status(), e.reason(), String.valueOf(e.attempts()),
                        e.exceptionClass() == null ? "-" : e.exceptionClass() + ": " + e.message())).toList());
            }
            return failOnFindings && !events.isEmpty() ? Core.FINDINGS : 0;
        }
    }

    /** What retry and abandon share: the criteria, a dry run without {@code --yes}, an audit line with it. */
    abstract static class BulkAction implements Callable<Integer> {
        @Mixin Connection connection;
        @Mixin Criteria criteria;
        @Spec CommandSpec spec;

        @Option(names = "--yes", description = "Do it; without it nothing changes")
        boolean yes;

        @Option(names = "--json", description = "Print JSON")
        boolean json;

        abstract String action();

        /** The JSON field that counts what was done: {@code retried}, {@code abandoned}. */
        abstract String past();

        abstract long wouldTouch(ParkedEvents.Counts counts);

        abstract int act(ParkedEvents parked, ParkedEvents.Filter filter);

        abstract String done(int n);

        @Override
        public Integer call() {
            ParkedEvents parked = ParkedEvents.create(connection.open());
            PrintWriter out = spec.commandLine().getOut();
            if (!yes) {
                long n = wouldTouch(parked.count(criteria.filter()));
                IdempotencyCommands.print(out, json, Map.of("dry_run", true, "would_" + action(), n), n
                        + " parked event(s) would be affected (" + action() + "); run again with --yes to do it");
                return 0;
            }
            int n = act(parked, criteria.filter());
            LoggerFactory.getLogger("dev.once.cli.audit").info("dispatch parked {} {} by {}: {}", action(),
                    criteria.describe(), System.getProperty("user.name"), n);
            IdempotencyCommands.print(out, json, Map.of("dry_run", false, past(), n), done(n));
            return 0;
        }
    }

    @Command(name = "retry", description = "Run failing and failed events again now, with a new retry window; the "
            + "events behind them follow in order. Without --yes: a dry run that counts them.")
    static final class Retry extends BulkAction {
        String action() {
            return "retry";
        }

        String past() {
            return "retried";
        }

        long wouldTouch(ParkedEvents.Counts counts) {
            return counts.retriable();
        }

        int act(ParkedEvents parked, ParkedEvents.Filter filter) {
            return parked.retry(filter);
        }

        String done(int n) {
            return n + " parked event(s) will run again on their group's next round";
        }
    }

    @Command(name = "abandon", description = "Abandon events for good: no handler runs them, and the events behind "
            + "them run next. Without --yes: a dry run that counts them.")
    static final class Abandon extends BulkAction {
        String action() {
            return "abandon";
        }

        String past() {
            return "abandoned";
        }

        long wouldTouch(ParkedEvents.Counts counts) {
            return counts.abandonable();
        }

        int act(ParkedEvents parked, ParkedEvents.Filter filter) {
            return parked.abandon(filter);
        }

        String done(int n) {
            return "abandoned " + n + " parked event(s)";
        }
    }

    static Map<String, Object> fields(ParkedEvents.ParkedEvent e) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("group", e.groupId());
        m.put("topic", e.topic());
        m.put("partition", e.partition());
        m.put("offset", e.offset());
        m.put("key", e.recordKey());
        m.put("event_id", e.eventId());
        m.put("event_type", e.eventType());
        m.put("event_version", e.eventVersion());
        m.put("tenant_id", e.tenantId());
        m.put("status", e.status());
        m.put("reason", e.reason());
        m.put("handler_keys", e.handlerKeys());
        m.put("attempts", e.attempts());
        m.put("first_failed_at", text(e.firstFailedAt()));
        m.put("last_failed_at", text(e.lastFailedAt()));
        m.put("exception_class", e.exceptionClass());
        m.put("message", e.message());
        m.put("fingerprint", e.fingerprint());
        m.put("next_attempt_at", text(e.nextAttemptAt()));
        m.put("parked_at", text(e.parkedAt()));
        return m;
    }

    private static String text(Instant instant) {
        return instant == null ? null : instant.toString();
    }

    private ParkedCommands() {
    }
}
