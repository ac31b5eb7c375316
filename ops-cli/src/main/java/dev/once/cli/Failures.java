package dev.once.cli;

import dev.once.OnceException;
import java.io.PrintWriter;
import java.sql.SQLException;
import picocli.CommandLine;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * What {@code core} prints when a command cannot do its work: one line {@code core: <reason>} on stderr and the exit
 * code the README promises, so that scripts can tell a wrong command line (2) from a database that cannot serve it
 * (3). Anything else is a bug in core: its stack trace is printed, for the bug report, and the exit code is
 * {@link Core#BUG} (70, {@code EX_SOFTWARE}), so that a script that acts on findings (1) never mistakes one for it.
 */
final class Failures implements IParameterExceptionHandler, IExecutionExceptionHandler {

    /** A command line picocli refused (unknown flag, missing or out-of-range value): the reason names the flag. */
    @Override
    public int handleParseException(ParameterException e, String[] args) {
        CommandLine commandLine = e.getCommandLine();
        PrintWriter err = commandLine.getErr();
        err.println("core: " + e.getMessage());
        UnmatchedArgumentException.printSuggestions(e, err);
        err.println("Try '" + commandLine.getCommandSpec().qualifiedName() + " --help' for more information.");
        return Core.USAGE;
    }

    @Override
    public int handleExecutionException(Exception e, CommandLine commandLine, ParseResult parseResult)
            throws Exception {
        PrintWriter err = commandLine.getErr();
        if (e instanceof DatabaseUnreachableException) {
            err.println("core: " + e.getMessage());
            return Core.UNREACHABLE;
        }
        SQLException sql = DatabaseFailures.sqlCause(e);
        if (sql != null) {
            String url = Connection.of(commandLine.getCommandSpec()).safeUrl();
            err.println("core: " + DatabaseFailures.describe(sql, url));
            return Core.UNREACHABLE;
        }
        // The store's own refusals of an argument (a key with a space, --yes missing) come before any SQL ran.
        if (e instanceof OnceException || e instanceof IllegalArgumentException) {
            err.println("core: " + e.getMessage());
            return Core.USAGE;
        }
        err.println("core: an unexpected failure, a bug in core; please report it with this trace:");
        e.printStackTrace(err);
        return Core.BUG;
    }
}
