package dev.once.dispatch;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * What the dispatcher does with an event it has no handler for. Two cases differ:
 * <ul>
 *   <li>a <b>foreign type</b>, which no handler of any version takes: on a shared topic (a fixed
 *   {@code once.outbox.relay.topic}, a topic template, another team's events) these are someone else's, so the default
 *   is to {@link Action#SKIP skip} them and count them ({@link #FOREIGN_TYPE});</li>
 *   <li>an <b>unknown version</b> of a type that is handled in another version: during a rolling deploy a producer
 *   ships v2 before the consumers' v2 handler runs, so the default is to {@link Action#HOLD hold} the event (park its
 *   key) until an instance with its handler runs it, in order ({@link #UNKNOWN_VERSION}). Nothing is lost.</li>
 * </ul>
 * Either choice can be set for one topic, and one event type's choice overrides both (the type's is the choice for
 * whichever case applies to it). A poison record (bad signature, malformed headers, a payload that is not what its
 * content type says) is not unhandled: it is dead-lettered at once, whatever this policy says. Immutable.
 */
public final class UnhandledPolicy {

    /** What to do with an unhandled event. */
    public enum Action {
        /** Count it ({@code once.dispatcher.unhandled}) and move on: its offset is committed, nothing runs. */
        SKIP,
        /** Park its key until a handler for it runs on some instance; later events of the key wait behind it. */
        HOLD,
        /** Send it to the dead-letter topic at once, as poison. */
        DEAD_LETTER;

        /** {@code skip}, {@code hold} or {@code dead-letter}, in any case. */
        public static Action parse(String value) {
            try {
                return valueOf(value.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("'" + value + "' is not skip, hold or dead-letter");
            }
        }
    }

    /** A type no handler takes in any version, by default: skipped and counted. */
    public static final Action FOREIGN_TYPE = Action.SKIP;

    /** A handled type in a version no handler takes, by default: held until a deploy brings its handler. */
    public static final Action UNKNOWN_VERSION = Action.HOLD;

    private static final UnhandledPolicy DEFAULTS = new UnhandledPolicy(FOREIGN_TYPE, UNKNOWN_VERSION, Map.of(), Map.of(),
            Map.of());

    private final Action foreignType;
    private final Action unknownVersion;
    private final Map<String, Action> topicForeignType;
    private final Map<String, Action> topicUnknownVersion;
    private final Map<String, Action> types;

    private UnhandledPolicy(Action foreignType, Action unknownVersion, Map<String, Action> topicForeignType,
                            Map<String, Action> topicUnknownVersion, Map<String, Action> types) {
        this.foreignType = foreignType;
        this.unknownVersion = unknownVersion;
        this.topicForeignType = Map.copyOf(topicForeignType);
        this.topicUnknownVersion = Map.copyOf(topicUnknownVersion);
        this.types = Map.copyOf(types);
    }

    /** {@link #FOREIGN_TYPE} and {@link #UNKNOWN_VERSION} everywhere. */
    public static UnhandledPolicy ofDefaults() {
        return DEFAULTS;
    }

    /** This policy with {@code action} for foreign types on every topic without a choice of its own. */
    public UnhandledPolicy foreignType(Action action) {
        return new UnhandledPolicy(required(action), unknownVersion, topicForeignType, topicUnknownVersion, types);
    }

    /** This policy with {@code action} for unknown versions on every topic without a choice of its own. */
    public UnhandledPolicy unknownVersion(Action action) {
        return new UnhandledPolicy(foreignType, required(action), topicForeignType, topicUnknownVersion, types);
    }

    /** This policy with {@code action} for foreign types on {@code topic}. */
    public UnhandledPolicy foreignTypeOn(String topic, Action action) {
        return new UnhandledPolicy(foreignType, unknownVersion, with(topicForeignType, topic, action),
                topicUnknownVersion, types);
    }

    /** This policy with {@code action} for unknown versions on {@code topic}. */
    public UnhandledPolicy unknownVersionOn(String topic, Action action) {
        return new UnhandledPolicy(foreignType, unknownVersion, topicForeignType,
                with(topicUnknownVersion, topic, action), types);
    }

    /** This policy with {@code action} for unhandled events of {@code eventType}, on every topic, in either case. */
    public UnhandledPolicy forType(String eventType, Action action) {
        return new UnhandledPolicy(foreignType, unknownVersion, topicForeignType, topicUnknownVersion,
                with(types, eventType, action));
    }

    /**
     * The action for an unhandled event of {@code eventType} on {@code topic}: {@code knownType} when some handler
     * takes the type in another version.
     */
    public Action decide(String topic, String eventType, boolean knownType) {
        Action forType = types.get(eventType);
        if (forType != null) {
            return forType;
        }
        return knownType ? topicUnknownVersion.getOrDefault(topic, unknownVersion)
                : topicForeignType.getOrDefault(topic, foreignType);
    }

    @Override
    public String toString() {
        return "foreign types " + foreignType + topicForeignType + ", unknown versions " + unknownVersion
                + topicUnknownVersion + ", types " + types;
    }

    private static Map<String, Action> with(Map<String, Action> map, String name, Action action) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("a topic or event type is required");
        }
        Map<String, Action> copy = new HashMap<>(map);
        copy.put(name, required(action));
        return copy;
    }

    private static Action required(Action action) {
        if (action == null) {
            throw new IllegalArgumentException("an action is required: SKIP, HOLD or DEAD_LETTER");
        }
        return action;
    }
}
