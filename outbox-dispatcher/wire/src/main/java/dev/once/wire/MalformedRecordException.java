package dev.once.wire;

import dev.once.OnceException;

/**
 * A Kafka record that can never be an event ({@link OutboxCodec#read}): a required header missing or malformed, no
 * value, or a wire format version this release does not read. Its message says which, and is what a dead letter's
 * reason begins with.
 */
public class MalformedRecordException extends OnceException {

    public MalformedRecordException(String message) {
        super(message);
    }
}
