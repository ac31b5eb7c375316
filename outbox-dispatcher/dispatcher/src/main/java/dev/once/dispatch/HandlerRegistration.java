package dev.once.dispatch;

import dev.once.idempotency.Route;
import java.util.List;

/**
 * A handler registered for one event type and version under a key of its own; several handlers may subscribe to one
 * event type, and each is claimed separately.
 *
 * @param topic the topic its events are published to, when the registration declares it ({@link #onTopic}); the
 *        dispatcher's autoconfiguration then refuses to start unless {@code once.dispatcher.topics} consumes it, since
 *        a handler whose topic nobody consumes would never run. {@code null}: not declared, not checked
 * @param batch for a registration made with {@link #transactionalBatch}, the handler that takes a run of events at
 *        once ({@code handler} then hands it one); {@code null} otherwise
 */
public record HandlerRegistration(String eventType, int eventVersion, String handlerKey, HandlerMode mode,
                                  EventHandler handler, String topic, BatchEventHandler batch) {

    public HandlerRegistration {
        if (eventType == null || eventType.isBlank() || handlerKey == null || handlerKey.isBlank() || eventVersion < 1) {
            throw new IllegalArgumentException("eventType, eventVersion >= 1 and handlerKey are required");
        }
        if (mode == null || handler == null) {
            throw new IllegalArgumentException("mode and handler are required");
        }
        if (topic != null && topic.isBlank()) {
            throw new IllegalArgumentException("topic must not be blank; null leaves it undeclared");
        }
        if (batch != null && mode != HandlerMode.TRANSACTIONAL) {
            throw new IllegalArgumentException("a batch handler is TRANSACTIONAL: its events' claims and effects commit "
                    + "in one transaction");
        }
    }

    /** A registration of a handler of one event at a time. */
    public HandlerRegistration(String eventType, int eventVersion, String handlerKey, HandlerMode mode,
                               EventHandler handler, String topic) {
        this(eventType, eventVersion, handlerKey, mode, handler, topic, null);
    }

    /** A registration that does not declare its topic. */
    public HandlerRegistration(String eventType, int eventVersion, String handlerKey, HandlerMode mode,
                               EventHandler handler) {
        this(eventType, eventVersion, handlerKey, mode, handler, null, null);
    }

    public static HandlerRegistration transactional(String eventType, int version, String handlerKey, EventHandler handler) {
        return new HandlerRegistration(eventType, version, handlerKey, HandlerMode.TRANSACTIONAL, handler);
    }

    public static HandlerRegistration leased(String eventType, int version, String handlerKey, EventHandler handler) {
        return new HandlerRegistration(eventType, version, handlerKey, HandlerMode.LEASED, handler);
    }

    /**
     * A TRANSACTIONAL handler that takes the events of a poll at once ({@link BatchEventHandler}): the dispatcher claims
     * them, calls the handler once with those not handled before, and completes the claims, all in one transaction.
     */
    public static HandlerRegistration transactionalBatch(String eventType, int version, String handlerKey,
                                                         BatchEventHandler handler) {
        if (handler == null) {
            throw new IllegalArgumentException("mode and handler are required");
        }
        return new HandlerRegistration(eventType, version, handlerKey, HandlerMode.TRANSACTIONAL,
                event -> handler.handle(List.of(event)), null, handler);
    }

    /** The key under which the handlers of one event type and version are looked up. */
    static String key(String eventType, int eventVersion) {
        return eventType + ":v" + eventVersion;
    }

    /**
     * This registration, declaring that its events are published to {@code topic} (by default
     * {@code <prefix>.<aggregate_type>}, e.g. {@code once.account}), so that a topic missing from
     * {@code once.dispatcher.topics} stops the application at startup instead of leaving the handler idle.
     */
    public HandlerRegistration onTopic(String topic) {
        return new HandlerRegistration(eventType, eventVersion, handlerKey, mode, handler, topic, batch);
    }

    /** The claim's route: {@code <event_type>:v<event_version>:<handler_key>}. */
    public Route route() {
        return Route.of(eventType + ":v" + eventVersion + ":" + handlerKey);
    }
}
