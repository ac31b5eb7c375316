package dev.once.relay;

import dev.once.OnceException;

/** The broker could not be reached or did not acknowledge in time; the relay retries with backoff. */
public class TransportUnavailableException extends OnceException {

    public TransportUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
