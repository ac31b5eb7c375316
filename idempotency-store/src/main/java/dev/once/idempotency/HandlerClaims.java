package dev.once.idempotency;

import java.time.Duration;
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

    /**
     * Each handler's claims, by route: how many still protect against a redelivery (and of those, how many failed or
     * are being handled, the oldest, and when the first one expires), how many have lapsed and wait for the service's
     * retention sweep, and the claim retention the newest was given ({@code once.dispatcher.claim-retention} when it
     * was claimed), for one handler key or all ({@code null}). Reads every handler claim: an operator's query.
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

    /** One handler's claims (route {@code <event_type>:v<version>:<handler_key>}), as {@link #retention} reads them. */
    public record HandlerRetention(String route, long claims, long lapsed, long failed, long processing, Instant oldestClaim,
                                   Instant firstExpiry, Duration retention) {

        /** The handler key: the route's last part. */
        public String handlerKey() {
            return route.substring(route.lastIndexOf(':') + 1);
        }
    }
}
