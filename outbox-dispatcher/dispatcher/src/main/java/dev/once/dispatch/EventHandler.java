package dev.once.dispatch;

/** Handles one event. Throwing makes the dispatcher retry it with backoff and, in the end, dead-letter it. */
@FunctionalInterface
public interface EventHandler {

    void handle(HandledEvent event) throws Exception;
}
