package dev.once.cli;

import dev.once.audit.OperatorAudit;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code core audit}: what operators did, through core and the console, newest first. */
@Command(name = "audit", description = "What operators did (core, the console, the operator API), newest first: who, "
        + "through what, the action, its target or filter, how many rows, and the reason given.")
final class AuditCommand implements Callable<Integer> {
    @Mixin Connection connection;
    @Spec CommandSpec spec;

    @Option(names = "--limit", defaultValue = "50", converter = Counts.class,
            description = "At most this many, 1 to " + Counts.MAX + " (default ${DEFAULT-VALUE})")
    int limit;

    @Option(names = "--json", description = "Print JSON")
    boolean json;

    @Override
    public Integer call() {
        List<OperatorAudit.Entry> entries = OperatorAudit.create(connection.open()).recent(limit);
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            Output.json(out, entries.stream().map(OperatorAudit.Entry::toMap).toList());
        } else if (entries.isEmpty()) {
            out.println("no operator actions recorded");
        } else {
            Output.table(out, List.of("AT", "OPERATOR", "VIA", "ACTION", "TARGET", "ROWS", "REASON"),
                    entries.stream().map(e -> List.of(e.at().toString(), e.operator(), e.via(), e.action(),
                            e.target().toString(), String.valueOf(e.affected()), e.reason().isEmpty() ? "-" : e.reason()))
                            .toList());
        }
        return 0;
    }

}
