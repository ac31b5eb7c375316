package dev.once.idempotency;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import javax.sql.DataSource;

/**
 * The operator's view of the events Kafka dispatchers parked ({@code once_parked_event}): a key whose event kept
 * failing, or whose event's version has no handler yet, with the key's later events behind it in order. Operators
 * act in bulk, by group, handler, event type, tenant, failure (fingerprint or exception class) and age; each action
 * has a dry run ({@link #count}) that counts what it would touch. Neither action needs a dead letter re-published: the
 * parked event itself is run again, by the dispatchers of its group. Thread-safe.
 */
public interface ParkedEvents {

    /** The parked events in {@code dataSource}, whose schema {@link OnceMigrations#migrate} has created. */
    static ParkedEvents create(DataSource dataSource) {
        return new JdbcParkedEvents(dataSource);
    }

    /** Parked events that match {@code filter}, oldest first. */
    List<ParkedEvent> list(Filter filter, int limit);

    /** How many events match {@code filter}, by what each action would do to them: the dry run. */
    Counts count(Filter filter);

    /**
     * Runs failing and failed events again now: each matching key's head that failed (or is failing) is due at once,
     * with a new retry window, on the next round of a dispatcher of its group; the events behind follow in order.
     * Returns how many were made due.
     */
    int retry(Filter filter);

    /**
     * Abandons the matching events for good (a terminal state, kept as long as claims, then purged): no handler runs
     * them, and the events behind them on their keys run next, in order. Returns how many were abandoned.
     */
    int abandon(Filter filter);

    /** Which parked events an action takes; {@code null} leaves a criterion out. */
    record Filter(String groupId, String handlerKey, String eventType, String tenantId, String failure,
                  Duration olderThan) {

        public static Filter all() {
            return new Filter(null, null, null, null, null, null);
        }

        public Filter group(String value) {
            return new Filter(value, handlerKey, eventType, tenantId, failure, olderThan);
        }

        /** Events whose failure names this handler. */
        public Filter handler(String value) {
            return new Filter(groupId, value, eventType, tenantId, failure, olderThan);
        }

        public Filter eventType(String value) {
            return new Filter(groupId, handlerKey, value, tenantId, failure, olderThan);
        }

        public Filter tenant(String value) {
            return new Filter(groupId, handlerKey, eventType, value, failure, olderThan);
        }

        /** Events whose failure has this fingerprint or this exception class. */
        public Filter failure(String value) {
            return new Filter(groupId, handlerKey, eventType, tenantId, value, olderThan);
        }

        /** Events parked at least this long ago. */
        public Filter olderThan(Duration value) {
            return new Filter(groupId, handlerKey, eventType, tenantId, failure, value);
        }
    }

    /** What a dry run finds: events {@link #retry} would make due, and events {@link #abandon} would abandon. */
    record Counts(long retriable, long abandonable) {
    }

    /**
     * One parked event: where it came from, why it is parked ({@code failing}, {@code held}, or {@code behind} its
     * key's head), its status ({@code parked}, {@code failed} after its window, {@code abandoned}) and its failures;
     * {@code nextAttemptAt} is {@code null} while it waits behind its key's head.
     */
    record ParkedEvent(long id, String groupId, String topic, int partition, long offset, String recordKey,
                       String eventId, String eventType, Integer eventVersion, String tenantId, String status,
                       String reason, List<String> handlerKeys, int attempts, Instant firstFailedAt,
                       Instant lastFailedAt, String exceptionClass, String message, String fingerprint,
                       Instant nextAttemptAt, Instant parkedAt) {
    }
}
