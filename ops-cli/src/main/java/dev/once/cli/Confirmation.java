package dev.once.cli;

import dev.once.audit.Operator;
import picocli.CommandLine.Option;

/**
 * {@code --yes} and {@code --reason}: destructive commands change nothing without {@code --yes}, and each one taken is
 * recorded in the operator audit (see {@code core audit}) with the OS user and the reason.
 */
final class Confirmation {

    @Option(names = "--yes", description = "Required: this changes data")
    boolean yes;

    @Option(names = "--reason", description = "Why, for the operator audit (core audit)")
    String reason;

    /** Who acts: the OS user, through core, with {@code --reason}. */
    Operator operator() {
        return Operator.core(reason);
    }

    /** Refuses (exit code 2) unless {@code --yes} was given. */
    void require(String command, String effect) {
        if (!yes) {
            throw new IllegalArgumentException(command + " " + effect + ": add --yes");
        }
    }
}
