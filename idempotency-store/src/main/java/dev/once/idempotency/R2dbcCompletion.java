package dev.once.idempotency;

import dev.once.outbox.OutboxEvent;
import dev.once.outbox.R2dbcOutboxWriter;
import dev.once.spi.R2dbcStatements;
import java.util.List;
import java.util.UUID;
import org.springframework.r2dbc.core.DatabaseClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A claim's completion over R2DBC, for work that runs in an R2DBC transaction: the handler's outbox rows and the
 * record's {@code succeeded} with its response, written in the subscriber's transaction by the statements the JDBC
 * store sends with its commit ({@link IdempotencyStore#markSucceededAtCommit}), so that the work, its events and the
 * stored response commit together or not at all. A claim that is no longer the record's owner (its lease lapsed and a
 * retry took the key over) writes nothing: the completion fails with {@link StaleClaimException} and the transaction
 * rolls back. Claims themselves, failures and releases stay with the JDBC {@link IdempotencyStore}. Thread-safe.
 */
public final class R2dbcCompletion {

    private static final String COMPLETE = R2dbcStatements.numbered(CompleteWithEvents.COMPLETE_AT_COMMIT);

    private final DatabaseClient client;
    private final R2dbcOutboxWriter outbox;
    private final IdempotencyStoreOptions options;

    private R2dbcCompletion(DatabaseClient client, IdempotencyStoreOptions options) {
        this.client = client;
        this.outbox = R2dbcOutboxWriter.create(client);
        this.options = options;
    }

    /** Completions through {@code client}, storing responses within {@code options}' limit as the store does. */
    public static R2dbcCompletion create(DatabaseClient client, IdempotencyStoreOptions options) {
        return new R2dbcCompletion(client, options);
    }

    /**
     * Writes {@code events} (each with its id) and marks the record {@code succeeded} with {@code response},
     * {@code taskId} and the first event's id, when subscribed inside the work's R2DBC transaction.
     */
    public Mono<Void> succeed(ClaimToken token, StoredResponse response, String taskId, List<OutboxEvent> events) {
        return Mono.defer(() -> {
            StoredResponse stored = options.limit(response);
            UUID first = events.isEmpty() ? null : events.get(0).id();
            DatabaseClient.GenericExecuteSpec spec = client.sql(COMPLETE).bind(0, stored.statusCode());
            spec = R2dbcStatements.bind(spec, 1, stored.contentType(), String.class);
            spec = R2dbcStatements.bind(spec, 2, RecordColumns.headersJson(stored.headers()), String.class);
            spec = R2dbcStatements.bind(spec, 3, stored.bodyOmitted() ? null : stored.bodyUnsafe(), byte[].class);
            spec = spec.bind(4, stored.bodyOmitted());
            spec = R2dbcStatements.bind(spec, 5, taskId, String.class);
            spec = R2dbcStatements.bind(spec, 6, first, UUID.class);
            spec = spec.bind(7, token.recordId()).bind(8, token.fencingToken())
                    .bind(9, token.scope().tenantId()).bind(10, token.scope().userId())
                    .bind(11, token.scope().route().value()).bind(12, token.scope().key().value());
            return Flux.fromIterable(events).concatMap(event -> {
                if (event.id() == null) {
                    return Mono.error(new IllegalArgumentException(
                            "Events completed with a claim must carry their id; use UuidV7.next()"));
                }
                return outbox.append(event);
            }).then(spec.then())
                    .onErrorMap(e -> StaleClaimException.SQLSTATE.equals(R2dbcStatements.sqlState(e)),
                            e -> new StaleClaimException(token));
        });
    }
}
