package dev.once.cli;

import dev.once.audit.Operator;
import dev.once.idempotency.ParkedEvents;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
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
                Output.json(out, events.stream().map(ParkedEvents.ParkedEvent::toMap).toList());
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

    /** What retry and abandon share: the criteria, a dry run without {@code --yes}, an audit entry with it. */
    abstract static class BulkAction implements Callable<Integer> {
        @Mixin Connection connection;
        @Mixin Criteria criteria;
        @Spec CommandSpec spec;

        @Option(names = "--yes", description = "Do it; without it nothing changes")
        boolean yes;

        @Option(names = "--reason", description = "Why, for the operator audit (core audit)")
        String reason;

        @Option(names = "--json", description = "Print JSON")
        boolean json;

        abstract String action();

        /** The JSON field that counts what was done: {@code retried}, {@code abandoned}. */
        abstract String past();

        abstract long wouldTouch(ParkedEvents.Counts counts);

        abstract int act(ParkedEvents parked, ParkedEvents.Filter filter, Operator by);

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
            int n = act(parked, criteria.filter(), Operator.core(reason));
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

        int act(ParkedEvents parked, ParkedEvents.Filter filter, Operator by) {
            return parked.retry(filter, by);
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

        int act(ParkedEvents parked, ParkedEvents.Filter filter, Operator by) {
            return parked.abandon(filter, by);
        }

        String done(int n) {
            return "abandoned " + n + " parked event(s)";
        }
    }



    private ParkedCommands() {
    }
}
