package dev.once.wire;

/**
 * A Kafka record that can never be an event ({@link OutboxCodec#read}): a required header missing or malformed, no
 * value, or a wire format version this release does not read. Its message says which, and is what a dead letter's
 * reason begins with. An {@link IllegalArgumentException}, as the rest of this module throws, and not Once's
 * {@code OnceException}: the wire format runs without the store, in a Kafka Connect worker (once-connect's plugin).
 */
public class MalformedRecordException extends IllegalArgumentException {

    public MalformedRecordException(String message) {
        super(message);
    }
}
