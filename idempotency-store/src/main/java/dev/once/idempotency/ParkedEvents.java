package dev.once.idempotency;

import dev.once.audit.Operator;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The operator's view of the events Kafka dispatchers parked ({@code once_parked_event}): a key whose event kept
 * failing, or whose event's version has no handler yet, with the key's later events behind it in order. Operators
 * act in bulk, by group, handler, event type, tenant, failure (fingerprint or exception class) and age; each action
 * has a dry run ({@link #count}) that counts what it would touch. Neither action needs a dead letter re-published: the
 * parked event itself is run again, by the dispatchers of its group. Every action is recorded, in its own transaction,
 * in the {@link dev.once.audit.OperatorAudit operator audit}. Thread-safe.
 */
public interface ParkedEvents {

    /** The parked events in {@code dataSource}, whose schema {@link OnceMigrations#migrate} has created. */
    static ParkedEvents create(DataSource dataSource) {
        return new JdbcParkedEvents(dataSource);
    }

    /** Each consumer group's parked events that still hold their keys, by why they are parked. */
    List<GroupSummary> summary();

    /** Parked events that match {@code filter}, oldest first. */
    List<ParkedEvent> list(Filter filter, int limit);

    /** How many events match {@code filter}, by what each action would do to them: the dry run. */
    Counts count(Filter filter);

    /**
     * Runs failing and failed events again now: each matching key's head that failed (or is failing) is due at once,
     * with a new retry window, on the next round of a dispatcher of its group; the events behind follow in order.
     * An event a dispatcher is running at that moment (under its lease) is left to that run. Returns how many were
     * made due.
     */
    int retry(Filter filter, Operator by);

    /**
     * Abandons the matching events for good (a terminal state, kept as long as claims, then purged): no handler runs
     * them, and the events behind them on their keys run next, in order. An event a dispatcher is running at that
     * moment (under its lease) is left alone, so that the events behind it never overtake it: its run decides, and
     * the action can be repeated. Returns how many were abandoned.
     */
    int abandon(Filter filter, Operator by);

    /**
     * The failing and failed events that match {@code filter}, grouped by cause: handler and failure fingerprint,
     * largest group first, at most {@code limit} groups.
     */
    List<FailureGroup> failureGroups(Filter filter, int limit);

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

        /** The criteria that are set, by name, as an audit entry records them. */
        public Map<String, Object> criteria() {
            Map<String, Object> set = new LinkedHashMap<>();
            set.put("group", groupId);
            set.put("handler_key", handlerKey);
            set.put("event_type", eventType);
            set.put("tenant_id", tenantId);
            set.put("failure", failure);
            set.put("older_than", olderThan == null ? null : olderThan.toString());
            set.values().removeIf(java.util.Objects::isNull);
            return set;
        }
    }

    /**
     * Failing and failed events that share a cause: the handler that failed and the failure's fingerprint (exception
     * class and the handler's frame). {@code message} is the newest event's, {@code tenants} at most 20.
     */
    record FailureGroup(String handlerKey, String fingerprint, String exceptionClass, String message, long events,
                        long keys, Instant firstFailedAt, Instant lastFailedAt, List<String> tenants) {

        /** The filter that selects this group's events. */
        public Filter filter() {
            return Filter.all().handler(handlerKey).failure(fingerprint);
        }
    }

    /**
     * One consumer group's parked events: {@code held} (a version no handler takes yet), {@code failing} (retried
     * with backoff), {@code failed} (past the retry window, waiting for an operator), {@code behind} (later events of
     * those keys, in order), and the keys they hold.
     */
    record GroupSummary(String groupId, long held, long failing, long failed, long behind, long keys) {
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

        /** Its fields by their JSON names, in order, times as ISO-8601 text: what {@code core} and the console print. */
        public Map<String, Object> toMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("group", groupId);
            m.put("topic", topic);
            m.put("partition", partition);
            m.put("offset", offset);
            m.put("key", recordKey);
            m.put("event_id", eventId);
            m.put("event_type", eventType);
            m.put("event_version", eventVersion);
            m.put("tenant_id", tenantId);
            m.put("status", status);
            m.put("reason", reason);
            m.put("handler_keys", handlerKeys);
            m.put("attempts", attempts);
            m.put("first_failed_at", text(firstFailedAt));
            m.put("last_failed_at", text(lastFailedAt));
            m.put("exception_class", exceptionClass);
            m.put("message", message);
            m.put("fingerprint", fingerprint);
            m.put("next_attempt_at", text(nextAttemptAt));
            m.put("parked_at", text(parkedAt));
            return m;
        }

        private static String text(Instant instant) {
            return instant == null ? null : instant.toString();
        }
    }
}
