package dev.once.cli;

/** The database could not be reached with the given connection settings (exit code 3). */
final class DatabaseUnreachableException extends RuntimeException {

    DatabaseUnreachableException(String message, Throwable cause) {
        super(message, cause);
    }
}
