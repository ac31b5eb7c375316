package dev.once.cli;

import picocli.CommandLine.Option;

/** {@code --yes}: destructive commands change nothing without it. */
final class Confirmation {

    @Option(names = "--yes", description = "Required: this changes data")
    boolean yes;

    /** Refuses (exit code 2) unless {@code --yes} was given. */
    void require(String command, String effect) {
        if (!yes) {
            throw new IllegalArgumentException(command + " " + effect + ": add --yes");
        }
    }
}
