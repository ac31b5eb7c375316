package dev.once.outbox;

import dev.once.audit.Operator;
import dev.once.spi.SlotWatermarks;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The outbox as operators see it, and what they may do to it: pending rows, the oldest pending row's age, parked rows
 * with their reasons, a replication slot's activity and lag, and the redrive of a parked event. Every figure is read
 * from PostgreSQL when asked. Thread-safe.
 */
public interface OutboxOperations {

    /** The operations over {@code dataSource}, whose schema {@code OnceMigrations.migrate} has created. */
    static OutboxOperations create(DataSource dataSource) {
        return new JdbcOutboxOperations(dataSource);
    }

    /** How many rows wait to be published (neither published nor parked). */
    long pending();

    /** The age of the oldest pending row, or zero when nothing is pending. */
    Duration oldestPendingAge();

    /** How many rows are parked, waiting for an operator. */
    long parkedCount();

    /** The first {@code limit} parked rows, oldest first. */
    List<Parked> parked(int limit);

    /** The replication slots that relay this outbox from the WAL: those its watermarks were taken for. */
    List<String> slots();

    /**
     * The replication slot {@code slotName} as a relay that reads the WAL needs it: whether it exists in this database
     * and streams, and how far it lags behind the WAL in bytes and in time ({@link SlotWatermarks}).
     */
    Slot slot(String slotName);

    /**
     * Sends a parked event through the relay again. In one transaction, the parked event and every unpublished event
     * behind it in its aggregate are written anew in their order (same ids, new {@code seq}, not parked): the CDC
     * relay sees them as inserts, the polling relay as pending rows, and the aggregate keeps its order. If Kafka
     * refuses the event again, it is parked again. Recorded in the {@link dev.once.audit.OperatorAudit operator audit},
     * in the same transaction.
     *
     * @return how many rows were re-queued; 0 when the event is not parked
     */
    int redrive(UUID eventId, Operator by);

    /** A parked event and why it was parked. */
    record Parked(UUID id, String aggregateType, String aggregateId, String eventType, String reason, Instant parkedAt) {

        /** Its fields by their JSON names, in order: what {@code core outbox status} and the console print. */
        public java.util.Map<String, Object> toMap() {
            java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
            m.put("event_id", id.toString());
            m.put("aggregate_type", aggregateType);
            m.put("aggregate_id", aggregateId);
            m.put("event_type", eventType);
            m.put("reason", reason);
            m.put("parked_at", parkedAt.toString());
            return m;
        }
    }

    /**
     * A replication slot as read from PostgreSQL.
     *
     * @param state whether it exists in this database, is usable, and streams
     * @param database the database it belongs to; {@code null} when it does not exist
     * @param walStatus PostgreSQL's {@code wal_status}: {@code reserved}, {@code extended}, {@code unreserved} or
     *        {@code lost}; {@code null} when it does not exist
     * @param lagBytes WAL bytes written since the position it confirmed
     * @param lag how long ago the newest watermark it confirmed was taken ({@link SlotWatermarks}), or, while it has
     *        confirmed none, since the oldest was taken: how far behind the WAL its confirmed position is, in time.
     *        {@code null} while no watermark was taken
     */
    record Slot(String name, State state, String database, String walStatus, long lagBytes, Duration lag) {

        public enum State {
            /** No slot of that name: nothing streams the outbox, and nothing is deleted from it. */
            MISSING,
            /** The slot belongs to another database: it does not stream this outbox. */
            OTHER_DATABASE,
            /** PostgreSQL invalidated it ({@code wal_status = 'lost'}): the WAL it needed is gone. */
            LOST,
            /** It exists, and no walsender streams it. */
            INACTIVE,
            /** A walsender streams it. */
            STREAMING
        }

        public boolean active() {
            return state == State.STREAMING;
        }

        /**
         * Why the outbox is not being relayed through this slot, naming the fix; {@code null} while it streams and
         * has confirmed a watermark taken within {@code maxLag}.
         */
        public String problem(Duration maxLag) {
            return switch (state) {
                case MISSING -> "replication slot " + name + " does not exist, so nothing relays the outbox and "
                        + "nothing is deleted from it; the CDC relay's leader creates it, or, with Kafka Connect, the "
                        + "Debezium connector whose slot.name is " + name;
                case OTHER_DATABASE -> "replication slot " + name + " belongs to database " + database + ", not this "
                        + "one; give this service's relay a slot of its own";
                case LOST -> "replication slot " + name + " was invalidated by PostgreSQL (wal_status lost: the WAL it "
                        + "needed was removed, e.g. past max_slot_wal_keep_size); nothing is deleted from the outbox "
                        + "until it is created anew, and then every row it did not confirm is published again";
                case INACTIVE -> "no relay streams replication slot " + name + " (" + lagBytes + " bytes of WAL "
                        + "behind); nothing is deleted from the outbox meanwhile";
                case STREAMING -> lag != null && lag.compareTo(maxLag) > 0 ? "replication slot " + name + " has "
                        + "confirmed nothing for " + lag.toSeconds() + " s while the WAL grew (" + lagBytes
                        + " bytes behind, more than " + maxLag.toSeconds() + " s): its relay is stuck or paused" : null;
            };
        }
    }
}
