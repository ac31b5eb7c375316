package dev.once.idempotency;

import static dev.once.idempotency.StoreFixture.created;
import static dev.once.idempotency.StoreFixture.freshScope;
import static dev.once.idempotency.StoreFixture.hashOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.idempotency.ClaimResult.Claimed;
import dev.once.test.TestDatabase;
import jakarta.persistence.EntityManagerFactory;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.domain.PageRequest;
import org.springframework.data.jpa.repository.config.EnableJpaRepositories;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.orm.jpa.LocalContainerEntityManagerFactoryBean;
import org.springframework.orm.jpa.vendor.HibernateJpaVendorAdapter;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Transitions join the caller's JPA transaction: a binding commits or rolls back with the caller's own writes.
 * The entity and repository read every column the store writes.
 */
class JpaTransactionIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create();

    static AnnotationConfigApplicationContext context;
    static IdempotencyStore store;
    static TransactionTemplate tx;
    static IdempotencyRecordRepository repository;

    @BeforeAll
    static void start() {
        OnceMigrations.migrate(db.dataSource());
        context = new AnnotationConfigApplicationContext();
        context.registerBean(DataSource.class, db::dataSource);
        context.register(JpaConfig.class);
        context.refresh();
        store = IdempotencyStore.create(db.dataSource());
        tx = new TransactionTemplate(context.getBean(JpaTransactionManager.class));
        repository = context.getBean(IdempotencyRecordRepository.class);
        new org.springframework.jdbc.core.JdbcTemplate(db.dataSource())
                .execute("CREATE TABLE business_row (id uuid PRIMARY KEY, note text)");
    }

    @AfterAll
    static void stop() {
        context.close();
    }

    @Test
    void binding_and_completion_roll_back_with_the_callers_jpa_transaction() {
        IdempotencyScope scope = freshScope();
        Claimed c = (Claimed) store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults());
        UUID eventId = UUID.randomUUID();

        assertThatThrownBy(() -> tx.executeWithoutResult(status -> {
            insertBusinessRow(eventId);
            store.bindOutboxEvent(c.token(), eventId).orThrow(c.token());
            store.markSucceeded(c.token(), created("{}")).orThrow(c.token());
            throw new IllegalStateException("business rule failed after the writes");
        })).hasMessageContaining("business rule failed");

        assertThat(businessRows(eventId)).isZero();
        IdempotencyRecord record = repository.findByTenantIdAndUserIdAndRouteAndIdempotencyKey(
                scope.tenantId(), scope.userId(), scope.route().value(), scope.key().value()).orElseThrow();
        assertThat(record.getStatus()).isEqualTo(IdempotencyStatus.PROCESSING);
        assertThat(record.getOutboxEventId()).isNull();
    }

    @Test
    void binding_and_completion_commit_with_the_callers_jpa_transaction() {
        IdempotencyScope scope = freshScope();
        Claimed c = (Claimed) store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults());
        UUID eventId = UUID.randomUUID();

        tx.executeWithoutResult(status -> {
            insertBusinessRow(eventId);
            store.bindOutboxEvent(c.token(), eventId).orThrow(c.token());
            store.bindTask(c.token(), "task-9").orThrow(c.token());
            store.markSucceeded(c.token(), created("{\"ok\":true}")).orThrow(c.token());
        });

        assertThat(businessRows(eventId)).isEqualTo(1);
        assertThat(repository.findByOutboxEventId(eventId)).singleElement().satisfies(record -> {
            assertThat(record.getStatus()).isEqualTo(IdempotencyStatus.SUCCEEDED);
            assertThat(record.getTaskId()).isEqualTo("task-9");
            assertThat(record.getResponseCode()).isEqualTo(201);
            assertThat(new String(record.getResponseBody())).isEqualTo("{\"ok\":true}");
            assertThat(record.getResponseContentType()).isEqualTo("application/json");
            assertThat(record.getResponseHeaders()).contains("\"Location\"");
            assertThat(record.getLockedUntil()).isNull();
            assertThat(record.getExpiresAt()).isAfter(record.getCreatedAt());
            assertThat(record.getFencingToken()).isEqualTo(1);
            assertThat(record.getRequestHash()).isEqualTo(hashOf("{}"));
        });
    }

    @Test
    void the_repository_pages_records_by_status() {
        Claimed c = (Claimed) store.claim(IdempotencyScope.of("paging", "u", StoreFixture.ROUTE, "k1"), hashOf("{}"),
                ClaimPolicy.ofDefaults());
        store.markFailed(c.token(), StoredResponse.of(500, "text/plain", "boom"));

        assertThat(repository.findByTenantIdAndStatus("paging", IdempotencyStatus.FAILED, PageRequest.of(0, 10)))
                .singleElement().satisfies(r -> assertThat(r.getIdempotencyKey()).isEqualTo("k1"));
        assertThat(repository.countByStatus(IdempotencyStatus.FAILED)).isGreaterThanOrEqualTo(1);
    }

    private static void insertBusinessRow(UUID id) {
        new org.springframework.jdbc.core.JdbcTemplate(db.dataSource())
                .update("INSERT INTO business_row (id, note) VALUES (?, 'written in the same transaction')", id);
    }

    private static long businessRows(UUID id) {
        return new org.springframework.jdbc.core.JdbcTemplate(db.dataSource())
                .queryForObject("SELECT count(*) FROM business_row WHERE id = ?", Long.class, id);
    }

    @Configuration
    @EnableJpaRepositories(basePackageClasses = IdempotencyRecordRepository.class)
    static class JpaConfig {

        @Bean
        LocalContainerEntityManagerFactoryBean entityManagerFactory(DataSource dataSource) {
            LocalContainerEntityManagerFactoryBean factory = new LocalContainerEntityManagerFactoryBean();
            factory.setDataSource(dataSource);
            factory.setPackagesToScan(IdempotencyRecord.class.getPackageName());
            factory.setJpaVendorAdapter(new HibernateJpaVendorAdapter());
            return factory;
        }

        @Bean
        JpaTransactionManager transactionManager(EntityManagerFactory emf) {
            return new JpaTransactionManager(emf);
        }
    }
}
