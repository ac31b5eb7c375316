package dev.once.dispatch;

import dev.once.OnceException;

/**
 * Handlers threw. With {@link Parking} on, the record's key is parked and retried in the background; with it off, the
 * record is retried in place with backoff, then dead-lettered. Names every failed handler; the first failure is the
 * cause, the others are suppressed.
 */
public class HandlerFailedException extends OnceException {

    private final java.util.List<String> handlerKeys;

    public HandlerFailedException(String handlerKey, Throwable cause) {
        this(java.util.List.of(handlerKey), cause);
    }

    public HandlerFailedException(java.util.List<String> handlerKeys, Throwable cause) {
        super("Handler " + String.join(", ", handlerKeys) + " failed: " + cause, cause);
        this.handlerKeys = java.util.List.copyOf(handlerKeys);
    }

    /** One failure naming every handler of {@code failures}; the first one's cause, the others suppressed. */
    static HandlerFailedException of(java.util.List<HandlerFailedException> failures) {
        if (failures.size() == 1) {
            return failures.get(0);
        }
        HandlerFailedException all = new HandlerFailedException(
                failures.stream().map(HandlerFailedException::handlerKey).toList(), failures.get(0).getCause());
        failures.stream().skip(1).forEach(f -> all.addSuppressed(f.getCause()));
        return all;
    }

    /** The first failed handler. */
    public String handlerKey() {
        return handlerKeys.get(0);
    }

    public java.util.List<String> handlerKeys() {
        return handlerKeys;
    }
}
