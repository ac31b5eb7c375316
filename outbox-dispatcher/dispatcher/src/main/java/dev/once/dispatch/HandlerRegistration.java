package dev.once.dispatch;

import dev.once.idempotency.Route;

/**
 * A handler registered for one event type and version under a key of its own; several handlers may subscribe to one
 * event type, and each is claimed separately.
 */
public record HandlerRegistration(String eventType, int eventVersion, String handlerKey, HandlerMode mode,
                                  EventHandler handler) {

    public HandlerRegistration {
        if (eventType == null || eventType.isBlank() || handlerKey == null || handlerKey.isBlank() || eventVersion < 1) {
            throw new IllegalArgumentException("eventType, eventVersion >= 1 and handlerKey are required");
        }
        if (mode == null || handler == null) {
            throw new IllegalArgumentException("mode and handler are required");
        }
    }

    public static HandlerRegistration transactional(String eventType, int version, String handlerKey, EventHandler handler) {
        return new HandlerRegistration(eventType, version, handlerKey, HandlerMode.TRANSACTIONAL, handler);
    }

    public static HandlerRegistration leased(String eventType, int version, String handlerKey, EventHandler handler) {
        return new HandlerRegistration(eventType, version, handlerKey, HandlerMode.LEASED, handler);
    }

    /** The key under which the handlers of one event type and version are looked up. */
    static String key(String eventType, int eventVersion) {
        return eventType + ":v" + eventVersion;
    }

    /** The claim's route: {@code <event_type>:v<event_version>:<handler_key>}. */
    public Route route() {
        return Route.of(eventType + ":v" + eventVersion + ":" + handlerKey);
    }
}
