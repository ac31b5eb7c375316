package dev.once.outbox;

import dev.once.OnceException;

/** {@link OutboxWriter#append} was called with no transaction active. */
public class OutboxTransactionException extends OnceException {

    public OutboxTransactionException(String message) {
        super(message);
    }
}
