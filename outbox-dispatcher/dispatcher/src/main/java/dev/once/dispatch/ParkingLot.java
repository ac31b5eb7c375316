package dev.once.dispatch;

import dev.once.wire.OutboxMessage;
import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.support.SqlArrayValue;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * One consumer group's parked events ({@code once_parked_event}): a key whose event failed or is held parks there,
 * and the key's later events park behind it in offset order, so the partition's offsets move on while the key keeps
 * its order. A key is one tenant's record key on a topic's partition: an aggregate of one tenant never waits behind
 * another tenant's aggregate that shares its id. A key's first row that still holds is its head; only heads are
 * retried ({@link #take}), and a head that is done gives way to the next row ({@link #done}). Rows behind a head wait
 * with {@code next_attempt_at = infinity} and are made due when they become the head; every decision uses the
 * database clock. Thread-safe.
 */
final class ParkingLot {

    /**
     * Which keys of a poll are parked: one statement per poll, an index probe per key; on an empty table, nothing.
     */
    static final String PARKED_KEYS = """
            SELECT DISTINCT e.topic, e.kafka_partition, e.record_key, e.tenant_id
            FROM once_parked_event e
            JOIN unnest(CAST(:topics AS text[]), CAST(:partitions AS integer[]), CAST(:keys AS text[]),
                        CAST(:tenants AS text[])) AS x(t, p, k, tenant)
              ON e.topic = x.t AND e.kafka_partition = x.p AND e.record_key = x.k
                 AND e.tenant_id IS NOT DISTINCT FROM x.tenant
            WHERE e.group_id = :group AND e.status <> 'abandoned'
            """;

    /**
     * Parks a record: as the head of its key (failing or held, due after {@code :delay}), or behind the key's last row
     * that still holds, waiting until it becomes the head. The lock on that last row orders this insert with a retrier
     * that completes it: either the retrier's next-row step sees this row, or this insert sees the row gone and parks
     * as a head. A redelivered record is parked once.
     */
    static final String PARK = """
            INSERT INTO once_parked_event
                (group_id, topic, kafka_partition, kafka_offset, record_key, record_timestamp, header_names,
                 header_values, payload, event_id, event_type, event_version, tenant_id, status, reason, handler_keys,
                 attempts, first_failed_at, last_failed_at, exception_class, message, fingerprint, next_attempt_at,
                 retry_until)
            SELECT :group, :topic, :partition, :offset, :key, :timestamp, :headerNames, :headerValues, :payload,
                   :eventId, :eventType, :eventVersion, :tenantId, 'parked',
                   CASE WHEN last.id IS NULL THEN :reason ELSE 'behind' END,
                   :handlerKeys, :attempts,
                   CASE WHEN :attempts > 0 THEN statement_timestamp() END,
                   CASE WHEN :attempts > 0 THEN statement_timestamp() END,
                   :exceptionClass, :message, :fingerprint,
                   CASE WHEN last.id IS NULL THEN statement_timestamp() + CAST(:delayMs AS bigint) * interval '1 millisecond'
                        ELSE 'infinity' END,
                   CASE WHEN :attempts > 0 THEN statement_timestamp() + CAST(:windowMs AS bigint) * interval '1 millisecond' END
            FROM (SELECT 1) AS one
            LEFT JOIN LATERAL (SELECT e.id FROM once_parked_event e
                               WHERE e.group_id = :group AND e.topic = :topic AND e.kafka_partition = :partition
                                 AND e.record_key = :key AND e.tenant_id IS NOT DISTINCT FROM :tenantId
                                 AND e.status <> 'abandoned' AND e.kafka_offset < :offset
                               ORDER BY e.kafka_offset DESC
                               LIMIT 1
                               FOR SHARE) AS last ON true
            ON CONFLICT ON CONSTRAINT once_parked_event_record_uk DO NOTHING
            """;

    /**
     * Takes a due head this instance has a handler for, leasing it for {@code :leaseMs}: one statement, and
     * {@code SKIP LOCKED} so instances take different heads.
     */
    static final String TAKE = """
            UPDATE once_parked_event
            SET locked_until = statement_timestamp() + CAST(:leaseMs AS bigint) * interval '1 millisecond'
            WHERE id = (
                SELECT h.id FROM once_parked_event h
                WHERE h.group_id = :group AND h.status = 'parked' AND h.next_attempt_at <= statement_timestamp()
                  AND (h.locked_until IS NULL OR h.locked_until <= statement_timestamp())
                  AND h.event_type || ':v' || h.event_version = ANY (CAST(:handled AS text[]))
                  AND NOT EXISTS (SELECT 1 FROM once_parked_event e
                                  WHERE e.group_id = h.group_id AND e.topic = h.topic
                                    AND e.kafka_partition = h.kafka_partition AND e.record_key = h.record_key
                                    AND e.tenant_id IS NOT DISTINCT FROM h.tenant_id
                                    AND e.status <> 'abandoned' AND e.kafka_offset < h.kafka_offset)
                ORDER BY h.next_attempt_at
                LIMIT 1
                FOR UPDATE SKIP LOCKED)
            RETURNING id, topic, kafka_partition, kafka_offset, record_key, record_timestamp, header_names,
                      header_values, payload, attempts, handler_keys
            """;

    static final String DELETE = """
            DELETE FROM once_parked_event WHERE id = :id
            RETURNING group_id, topic, kafka_partition, record_key
            """;

    /**
     * Makes the heads of the given record keys due, each tenant's, when they were waiting behind a row that no longer
     * holds (also behind another tenant's row, as an instance of an earlier version parked them).
     */
    static final String PROMOTE = """
            UPDATE once_parked_event p
            SET next_attempt_at = statement_timestamp(), updated_at = statement_timestamp()
            FROM (SELECT DISTINCT ON (group_id, topic, kafka_partition, record_key, tenant_id) id
                  FROM once_parked_event
                  WHERE group_id = :group AND status <> 'abandoned'
                    AND (CAST(:all AS boolean) OR (topic, kafka_partition, record_key) IN
                        (SELECT t, pa, k FROM unnest(CAST(:topics AS text[]), CAST(:partitions AS integer[]),
                                                     CAST(:keys AS text[])) AS x(t, pa, k)))
                  ORDER BY group_id, topic, kafka_partition, record_key, tenant_id, kafka_offset) AS head
            WHERE p.id = head.id AND p.status = 'parked' AND p.next_attempt_at = 'infinity'
            """;

    /**
     * A head failed again: counted, its failure kept, its next attempt after {@code :delayMs}; past its retry window
     * it is {@code failed}, and its key stays parked behind it until an operator retries or abandons it. A head an
     * operator abandoned meanwhile (its lease had lapsed) stays abandoned.
     */
    static final String FAILED = """
            UPDATE once_parked_event
            SET attempts = attempts + 1, reason = 'failing', handler_keys = :handlerKeys,
                first_failed_at = coalesce(first_failed_at, statement_timestamp()),
                last_failed_at = statement_timestamp(), exception_class = :exceptionClass, message = :message,
                fingerprint = :fingerprint,
                retry_until = coalesce(retry_until, statement_timestamp() + CAST(:windowMs AS bigint) * interval '1 millisecond'),
                status = CASE WHEN coalesce(retry_until, 'infinity') <= statement_timestamp() THEN 'failed' ELSE 'parked' END,
                next_attempt_at = statement_timestamp() + CAST(:delayMs AS bigint) * interval '1 millisecond',
                locked_until = NULL, updated_at = statement_timestamp()
            WHERE id = :id AND status <> 'abandoned'
            RETURNING status, attempts
            """;

    /** A head that has no handler here after all (the configuration changed): held, for any instance that has one. */
    static final String HELD = """
            UPDATE once_parked_event
            SET reason = 'held', next_attempt_at = statement_timestamp(), locked_until = NULL,
                updated_at = statement_timestamp()
            WHERE id = :id AND status <> 'abandoned'
            """;

    /** Gives a lease back after a failure that was not the handler's (the database's). */
    static final String RELEASE = """
            UPDATE once_parked_event SET locked_until = NULL WHERE id = :id
            """;

    /** What health shows: the group's parked events and keys, by status and reason. */
    static final String SUMMARY = """
            SELECT status, reason, count(*) AS events,
                   count(DISTINCT (topic, kafka_partition, record_key, tenant_id)) AS keys
            FROM once_parked_event
            WHERE group_id = :group AND status <> 'abandoned'
            GROUP BY status, reason
            """;

    /** Abandoned rows are kept as long as claims, then purged. */
    static final String PURGE_ABANDONED = """
            DELETE FROM once_parked_event
            WHERE status = 'abandoned'
              AND updated_at < statement_timestamp() - CAST(:retentionMs AS bigint) * interval '1 millisecond'
            """;

    static final String FAILING_REASON = "failing";
    static final String HELD_REASON = "held";
    static final String BEHIND_REASON = "behind";

    /**
     * A head taken by {@link #take}: its row id, its record, the failures so far, and the handlers that failed it
     * (none for an event held, or parked behind another).
     */
    record Parked(long id, ConsumerRecord<String, byte[]> record, int attempts, Set<String> failedHandlers) {
    }

    /** Parked events of one status and reason, as health shows them. */
    record Count(String status, String reason, long events, long keys) {
    }

    private final NamedParameterJdbcTemplate jdbc;
    private final TransactionTemplate transactions;
    private final String group;
    private final ParkingPolicy policy;

    ParkingLot(DataSource dataSource, String group, ParkingPolicy policy) {
        this.jdbc = new NamedParameterJdbcTemplate(dataSource);
        this.transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        this.transactions.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        this.group = group;
        this.policy = policy;
    }

    String group() {
        return group;
    }

    ParkingPolicy policy() {
        return policy;
    }

    /** The parked keys among {@code deliveries}' ({@link #key}). */
    Set<String> parkedKeys(List<Delivery> deliveries) {
        List<Delivery> keyed = deliveries.stream().filter(d -> d.record().key() != null).toList();
        Set<String> parked = new HashSet<>();
        if (keyed.isEmpty()) {
            return parked;
        }
        jdbc.query(PARKED_KEYS, keys(keyed.stream().map(d -> d.record().topic()).toList(),
                        keyed.stream().map(d -> d.record().partition()).toList(),
                        keyed.stream().map(d -> d.record().key()).toList())
                        .addValue("tenants", new SqlArrayValue("text", keyed.stream().map(ParkingLot::tenant).toArray())),
                rs -> {
                    parked.add(key(rs.getString(1), rs.getInt(2), rs.getString(3), rs.getString(4)));
                });
        return parked;
    }

    /** A delivery's key as {@link #parkedKeys} names it: its tenant's; {@code null} for a record without a key. */
    static String key(Delivery delivery) {
        ConsumerRecord<String, byte[]> record = delivery.record();
        return record.key() == null ? null : key(record.topic(), record.partition(), record.key(), tenant(delivery));
    }

    private static String key(String topic, int partition, String key, String tenant) {
        return topic + '\u0000' + partition + '\u0000' + key + '\u0000' + tenant;
    }

    private static String tenant(Delivery delivery) {
        return delivery.message() == null ? null : delivery.message().tenantId();
    }

    /**
     * Parks {@code delivery}: behind its key's parked rows if there are any, else as its key's head: {@code failing}
     * with {@code failure}, due after the policy's first interval; or {@code held} (no failure), due at once.
     */
    void park(Delivery delivery, HandlerFailure failure) {
        String reason = failure == null ? HELD_REASON : FAILING_REASON;
        Duration delay = failure == null ? Duration.ZERO : policy.delay(1);
        Duration window = policy.window();
        ConsumerRecord<String, byte[]> record = delivery.record();
        OutboxMessage message = delivery.message();
        List<String> names = new ArrayList<>();
        List<byte[]> values = new ArrayList<>();
        for (Header header : record.headers()) {
            names.add(header.key());
            values.add(header.value());
        }
        MapSqlParameterSource p = new MapSqlParameterSource()
                .addValue("group", group).addValue("topic", record.topic()).addValue("partition", record.partition())
                .addValue("offset", record.offset()).addValue("key", record.key())
                .addValue("timestamp", record.timestamp())
                .addValue("headerNames", new SqlArrayValue("text", names.toArray()))
                .addValue("headerValues", new SqlArrayValue("bytea", (Object[]) values.toArray(new byte[0][])))
                .addValue("payload", record.value())
                .addValue("eventId", message == null ? null : message.id().toString())
                .addValue("eventType", message == null ? null : message.eventType())
                .addValue("eventVersion", message == null ? null : message.eventVersion())
                .addValue("tenantId", tenant(delivery))
                .addValue("reason", reason)
                .addValue("delayMs", delay.toMillis()).addValue("windowMs", window.toMillis());
        failure(p, failure);
        p.addValue("attempts", failure == null ? 0 : 1);
        jdbc.update(PARK, p);
    }

    /** A due head this instance can run ({@code handled}: its handlers' {@code <type>:v<version>}), leased. */
    Optional<Parked> take(Set<String> handled, Duration lease) {
        if (handled.isEmpty()) {
            return Optional.empty();
        }
        List<Parked> taken = jdbc.query(TAKE, new MapSqlParameterSource("group", group)
                .addValue("leaseMs", lease.toMillis())
                .addValue("handled", new SqlArrayValue("text", handled.toArray())), (rs, n) -> parked(rs));
        return taken.stream().findFirst();
    }

    /** The head ran (or no longer needs to): its row goes, and the key's next row becomes the head. */
    void done(Parked parked) {
        transactions.executeWithoutResult(s -> {
            List<ConsumerRecord<String, byte[]>> gone = jdbc.query(DELETE, new MapSqlParameterSource("id", parked.id()),
                    (rs, n) -> parked.record());
            ConsumerRecord<String, byte[]> record = parked.record();
            if (!gone.isEmpty() && record.key() != null) {
                // a statement of its own: it sees a row parked behind while the delete waited for that row's lock
                jdbc.update(PROMOTE, keys(List.of(record.topic()), List.of(record.partition()), List.of(record.key()))
                        .addValue("all", false));
            }
        });
    }

    /** Makes every key's head due that waits behind nothing: a safety net after a crash between two statements. */
    int promoteAll() {
        return jdbc.update(PROMOTE, keys(List.of(), List.of(), List.of()).addValue("all", true));
    }

    /** The head failed again; returns whether it is now {@code failed}, past its window. */
    boolean failed(Parked parked, HandlerFailure failure) {
        MapSqlParameterSource p = new MapSqlParameterSource("id", parked.id())
                .addValue("delayMs", policy.delay(parked.attempts() + 1).toMillis())
                .addValue("windowMs", policy.window().toMillis());
        failure(p, failure);
        return jdbc.query(FAILED, p, (rs, n) -> rs.getString("status")).stream().anyMatch("failed"::equals);
    }

    void held(Parked parked) {
        jdbc.update(HELD, new MapSqlParameterSource("id", parked.id()));
    }

    void release(Parked parked) {
        jdbc.update(RELEASE, new MapSqlParameterSource("id", parked.id()));
    }

    List<Count> summary() {
        return jdbc.query(SUMMARY, new MapSqlParameterSource("group", group), (rs, n) -> new Count(
                rs.getString("status"), rs.getString("reason"), rs.getLong("events"), rs.getLong("keys")));
    }

    int purgeAbandoned(Duration retention) {
        return jdbc.update(PURGE_ABANDONED, new MapSqlParameterSource("retentionMs", retention.toMillis()));
    }

    private MapSqlParameterSource keys(List<String> topics, List<Integer> partitions, List<String> keys) {
        return new MapSqlParameterSource("group", group)
                .addValue("topics", new SqlArrayValue("text", topics.toArray()))
                .addValue("partitions", new SqlArrayValue("integer", partitions.toArray()))
                .addValue("keys", new SqlArrayValue("text", keys.toArray()));
    }

    private static void failure(MapSqlParameterSource p, HandlerFailure failure) {
        p.addValue("handlerKeys", new SqlArrayValue("text",
                        failure == null ? new Object[0] : failure.handlerKeys().toArray()))
                .addValue("exceptionClass", failure == null ? null : failure.exceptionClass())
                .addValue("message", failure == null ? null : failure.message())
                .addValue("fingerprint", failure == null ? null : failure.fingerprint());
    }

    private static Parked parked(ResultSet rs) throws SQLException {
        String[] names = (String[]) array(rs.getArray("header_names"));
        byte[][] values = (byte[][]) array(rs.getArray("header_values"));
        RecordHeaders headers = new RecordHeaders();
        for (int i = 0; i < names.length; i++) {
            headers.add(names[i], values[i]);
        }
        ConsumerRecord<String, byte[]> record = new ConsumerRecord<>(rs.getString("topic"),
                rs.getInt("kafka_partition"), rs.getLong("kafka_offset"), rs.getLong("record_timestamp"),
                TimestampType.CREATE_TIME, -1, -1, rs.getString("record_key"), rs.getBytes("payload"), headers,
                Optional.empty());
        Array failed = rs.getArray("handler_keys");
        return new Parked(rs.getLong("id"), record, rs.getInt("attempts"),
                failed == null ? Set.of() : new HashSet<>(java.util.Arrays.asList((String[]) array(failed))));
    }

    private static Object array(Array array) throws SQLException {
        try {
            return array.getArray();
        } finally {
            array.free();
        }
    }
}
