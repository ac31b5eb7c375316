package dev.once.dispatch;

import dev.once.OnceException;

/**
 * Handlers threw; the record is retried with backoff, then dead-lettered. Names every failed handler; the first
 * failure is the cause, the others are suppressed.
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

    /** The first failed handler. */
    public String handlerKey() {
        return handlerKeys.get(0);
    }

    public java.util.List<String> handlerKeys() {
        return handlerKeys;
    }
}
