package dev.once.dispatch;

import dev.once.OnceException;

/**
 * A record no handler can ever process: unparseable payload, missing or malformed tenant / event_id headers, a
 * signature refused, an event id reused with another payload, or no handler for its type and version when the
 * {@link UnhandledPolicy} says to dead-letter it (by default such events are skipped or held instead). It goes to the
 * dead-letter topic at once, and the partition keeps flowing.
 */
public class PoisonEventException extends OnceException {

    public PoisonEventException(String message) {
        super(message);
    }
}
