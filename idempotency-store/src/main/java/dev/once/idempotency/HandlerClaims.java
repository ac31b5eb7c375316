package dev.once.idempotency;

import dev.once.audit.Operator;
import java.time.Instant;
import java.util.List;
import javax.sql.DataSource;

/**
 * The operator's view of Kafka handlers' claims (routes {@code <event_type>:v<version>:<handler_key>}, keys = event
 * ids): which failed, and letting a failed handler run again on the event's next delivery or redrive. Thread-safe.
 */
public interface HandlerClaims {

    /** The handler claims in {@code dataSource}, whose schema {@link OnceMigrations#migrate} has created. */
    static HandlerClaims create(DataSource dataSource) {
        return new JdbcHandlerClaims(dataSource);
    }

    /** Failed handler claims, newest first, for one handler key or all ({@code null}). */
    List<FailedHandler> failed(String handlerKey, int limit);

    /**
     * Lets handler {@code handlerKey} run again for event {@code eventId}; returns how many claims were failed. Recorded
     * in the {@link dev.once.audit.OperatorAudit operator audit}, in the same transaction.
     */
    int retry(String eventId, String handlerKey, Operator by);

    /**
     * Each handler's claims, by route: how many there are, how many failed or are being handled, how many are in the
     * undated partition, and the day of the oldest dated one, for one handler key or all ({@code null}). Reads every
     * handler claim: an operator's query.
     */
    List<HandlerRetention> retention(String handlerKey);

    /** A failed handler claim. */
    public record FailedHandler(String tenantId, String actorId, String route, String eventId, long attempts,
                                Instant failedAt, String reason) {

        /** The handler key: the route's last part. */
        public String handlerKey() {
            return route.substring(route.lastIndexOf(':') + 1);
        }
    }

    /**
     * One handler's claims (route {@code <event_type>:v<version>:<handler_key>}), as {@link #retention} reads them.
     *
     * @param undated claims kept by row rather than by day: events whose id is not a UUIDv7, or claimed when older
     *        than the claim retention
     * @param oldestDay the day of the oldest dated claim, or {@code null}
     */
    public record HandlerRetention(String route, long claims, long failed, long processing, long undated,
                                   java.time.LocalDate oldestDay) {

        /** The handler key: the route's last part. */
        public String handlerKey() {
            return route.substring(route.lastIndexOf(':') + 1);
        }
    }
}
