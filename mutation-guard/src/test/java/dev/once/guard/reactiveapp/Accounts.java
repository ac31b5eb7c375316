package dev.once.guard.reactiveapp;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.r2dbc.core.DatabaseClient;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The test service's account writes as a WebFlux handler makes them in each mode: with JDBC on the subscribing
 * thread (the guard's transaction's), or with R2DBC in the subscriber's R2DBC transaction.
 */
interface Accounts {

    Mono<Map<String, Object>> insert(String tenantId, String name, String email);

    Mono<Map<String, Object>> find(UUID id);

    /** Stores a JSON document as it was sent, in a {@code jsonb} column (see {@code DocumentsController}). */
    Mono<Void> insertDocument(UUID id, String tenantId, String document);

    /** Blocking test instrumentation, where it may block in this mode. */
    Mono<Void> blocking(Callable<?> step);

    static Accounts jdbc(JdbcTemplate jdbc) {
        return new Accounts() {
            @Override
            public Mono<Map<String, Object>> insert(String tenantId, String name, String email) {
                return Mono.fromCallable(() -> {
                    UUID id = UUID.randomUUID();
                    jdbc.update("INSERT INTO account (id, tenant_id, name, email) VALUES (?, ?, ?, ?)", id, tenantId,
                            name, email);
                    return json(id, tenantId, name, email);
                });
            }

            @Override
            public Mono<Map<String, Object>> find(UUID id) {
                return Mono.fromCallable(() -> jdbc.queryForList("SELECT * FROM account WHERE id = ?", id))
                        .subscribeOn(Schedulers.boundedElastic())
                        .flatMap(rows -> rows.isEmpty() ? Mono.empty() : Mono.just(row(rows.get(0))));
            }

            @Override
            public Mono<Void> insertDocument(UUID id, String tenantId, String document) {
                return Mono.fromRunnable(() -> jdbc.update(
                        "INSERT INTO guard_document (id, tenant_id, body) VALUES (?, ?, CAST(? AS jsonb))",
                        id, tenantId, document));
            }

            @Override
            public Mono<Void> blocking(Callable<?> step) {
                return Mono.fromCallable(step).then(); // on the transaction's thread, which may block
            }
        };
    }

    static Accounts r2dbc(DatabaseClient client) {
        return new Accounts() {
            @Override
            public Mono<Map<String, Object>> insert(String tenantId, String name, String email) {
                UUID id = UUID.randomUUID();
                DatabaseClient.GenericExecuteSpec spec = client.sql(
                        "INSERT INTO account (id, tenant_id, name, email) VALUES (:id, :tenant, :name, :email)")
                        .bind("id", id).bind("tenant", tenantId).bind("name", name);
                spec = email == null ? spec.bindNull("email", String.class) : spec.bind("email", email);
                return spec.then().thenReturn(json(id, tenantId, name, email));
            }

            @Override
            public Mono<Map<String, Object>> find(UUID id) {
                return client.sql("SELECT * FROM account WHERE id = :id").bind("id", id).fetch().first().map(Accounts::row);
            }

            @Override
            public Mono<Void> insertDocument(UUID id, String tenantId, String document) {
                return client.sql("INSERT INTO guard_document (id, tenant_id, body) VALUES (:id, :tenant, CAST(:body AS jsonb))")
                        .bind("id", id).bind("tenant", tenantId).bind("body", document).then();
            }

            @Override
            public Mono<Void> blocking(Callable<?> step) {
                return Mono.fromCallable(step).subscribeOn(Schedulers.boundedElastic()).then(); // never on a driver's thread
            }
        };
    }

    private static Map<String, Object> row(Map<String, Object> row) {
        return json((UUID) row.get("id"), (String) row.get("tenant_id"), (String) row.get("name"),
                (String) row.get("email"));
    }

    private static Map<String, Object> json(UUID id, String tenantId, String name, String email) {
        return Map.of("id", id.toString(), "name", name, "email", String.valueOf(email), "tenant_id", tenantId);
    }
}
