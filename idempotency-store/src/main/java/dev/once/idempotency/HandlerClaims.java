package dev.once.idempotency;

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

    /** Lets handler {@code handlerKey} run again for event {@code eventId}; returns how many claims were failed. */
    int retry(String eventId, String handlerKey);

    /** A failed handler claim. */
    public record FailedHandler(String tenantId, String actorId, String route, String eventId, long attempts,
                                Instant failedAt, String reason) {

        /** The handler key: the route's last part. */
        public String handlerKey() {
            return route.substring(route.lastIndexOf(':') + 1);
        }
    }
}
