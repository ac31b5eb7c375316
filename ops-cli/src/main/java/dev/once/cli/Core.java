package dev.once.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParseResult;

/**
 * {@code core}: Once's operator command. Exit codes: 0 success; 1 a finding that needs attention (with
 * {@code --fail-on-findings}); 2 a usage error (the message names the flag); 3 the database cannot serve the command
 * (unreachable, Once's tables missing, or a statement refused); 70 a bug in core. {@link Failures} prints the one
 * line that says why.
 */
@Command(name = "core", mixinStandardHelpOptions = true, versionProvider = Core.Version.class,
        description = "Operate Once: diagnose and mend idempotency records, watch the outbox.",
        subcommands = {IdempotencyCommands.class, OutboxCommands.class, DispatchCommands.class, AuditCommand.class,
                SchemaCommands.class})
public final class Core {

    /** A finding that needs attention, or a release, redrive or retry that changed nothing. */
    public static final int FINDINGS = 1;
    /** The command line is wrong (found before any SQL runs); the message names the flag. */
    public static final int USAGE = 2;
    /** The database cannot serve the command: unreachable, without Once's tables, or it refused a statement. */
    public static final int UNREACHABLE = 3;
    /** A bug in core itself (EX_SOFTWARE of sysexits.h): never a finding's 1. */
    public static final int BUG = 70;

    /** {@code core --version}: the version of the build, from {@code core.properties}, which Maven fills in. */
    static final class Version implements CommandLine.IVersionProvider {

        @Override
        public String[] getVersion() throws IOException {
            Properties properties = new Properties();
            try (InputStream in = Core.class.getResourceAsStream("core.properties")) {
                if (in == null) {
                    throw new IOException("core.properties is missing from core's classpath");
                }
                properties.load(in);
            }
            return new String[] {"core (Once) " + properties.getProperty("version")};
        }
    }

    public static void main(String[] args) {
        System.exit(run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
    }

    /** Runs {@code core args} with the given streams and returns the exit code; used by main and by the tests. */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        Failures failures = new Failures();
        CommandLine cli = new CommandLine(new Core());
        cli.setOut(out);
        cli.setErr(err);
        cli.setParameterExceptionHandler(failures);
        cli.setExecutionExceptionHandler(failures);
        try {
            return cli.execute(args);
        } finally {
            ParseResult parsed = cli.getParseResult();
            if (parsed != null) {
                parsed.asCommandLineList().forEach(c -> Connection.of(c.getCommandSpec()).close());
            }
        }
    }
}
