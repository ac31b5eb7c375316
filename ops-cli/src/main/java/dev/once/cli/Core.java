package dev.once.cli;

import dev.once.OnceException;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code core}: Once's operator command. Exit codes: 0 success; 1 a finding that needs attention (with
 * {@code --fail-on-findings}); 2 a usage error (the message names the flag); 3 the database is unreachable.
 */
@Command(name = "core", mixinStandardHelpOptions = true, version = "core (Once) 0.1.0",
        description = "Operate Once: diagnose and mend idempotency records, watch the outbox.",
        subcommands = {IdempotencyCommands.class, OutboxCommands.class, DispatchCommands.class})
public final class Core {

    public static final int FINDINGS = 1;
    public static final int USAGE = 2;
    public static final int UNREACHABLE = 3;

    public static void main(String[] args) {
        System.exit(run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
    }

    /** Runs {@code core args} with the given streams and returns the exit code; used by main and by the tests. */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cli = new CommandLine(new Core());
        cli.setOut(out);
        cli.setErr(err);
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            if (e instanceof DatabaseUnreachableException) {
                commandLine.getErr().println("core: " + e.getMessage());
                return UNREACHABLE;
            }
            if (e instanceof OnceException || e instanceof IllegalArgumentException) {
                commandLine.getErr().println("core: " + e.getMessage());
                return USAGE;
            }
            throw e;
        });
        return cli.execute(args);
    }
}
