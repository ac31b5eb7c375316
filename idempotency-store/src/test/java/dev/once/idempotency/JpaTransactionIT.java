package dev.once.idempotency;

import static dev.once.idempotency.StoreFixture.created;
import static dev.once.idempotency.StoreFixture.freshScope;
import static dev.once.idempotency.StoreFixture.hashOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.OnceException;
import dev.once.idempotency.ClaimResult.Claimed;
import dev.once.outbox.DomainEvents;
import dev.once.outbox.OutboxEvent;
import dev.once.outbox.OutboxEventMapper;
import dev.once.outbox.OutboxMapping;
import dev.once.outbox.OutboxTransactionException;
import dev.once.outbox.OutboxWriter;
import dev.once.test.TestDatabase;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.domain.AbstractAggregateRoot;
import org.springframework.data.domain.PageRequest;
import org.springframework.data.jpa.repository.config.EnableJpaRepositories;
import org.springframework.data.repository.CrudRepository;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.orm.jpa.LocalContainerEntityManagerFactoryBean;
import org.springframework.orm.jpa.vendor.HibernateJpaVendorAdapter;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The outbox and the store join the caller's JPA transaction: an aggregate saved through a Spring Data repository,
 * the outbox rows of the domain events it registered, and the binding of the first one to an idempotency record
 * commit together, or roll back together, also when the commit itself fails. The entity and repository of the store
 * read every column it writes.
 */
class JpaTransactionIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create();

    static AnnotationConfigApplicationContext context;
    static IdempotencyStore store;
    static TransactionTemplate tx;
    static IdempotencyRecordRepository repository;
    static Accounts accounts;
    static JdbcTemplate jdbc;

    @BeforeAll
    static void start() {
        OnceMigrations.migrate(db.dataSource());
        jdbc = new JdbcTemplate(db.dataSource());
        jdbc.execute("CREATE TABLE jpa_account (id uuid PRIMARY KEY, tenant_id text NOT NULL, email text NOT NULL UNIQUE, name text)");
        context = new AnnotationConfigApplicationContext();
        context.registerBean(DataSource.class, db::dataSource);
        context.register(JpaConfig.class);
        context.refresh();
        store = IdempotencyStore.create(db.dataSource());
        tx = new TransactionTemplate(context.getBean(JpaTransactionManager.class));
        repository = context.getBean(IdempotencyRecordRepository.class);
        accounts = context.getBean(Accounts.class);
    }

    @AfterAll
    static void stop() {
        context.close();
    }

    @Test
    void an_aggregate_saved_through_its_repository_commits_with_its_event_and_the_binding() {
        IdempotencyScope scope = freshScope();
        Claimed c = (Claimed) store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults());
        JpaAccount account = JpaAccount.open("acme", "alice", unique("ada"));

        tx.executeWithoutResult(status -> {
            accounts.save(account);
            UUID eventId = eventIds(account.id).get(0);
            store.bindOutboxEvent(c.token(), eventId).orThrow(c.token());
            store.bindTask(c.token(), "task-9").orThrow(c.token());
            store.markSucceeded(c.token(), created("{\"ok\":true}")).orThrow(c.token());
        });

        assertThat(accounts.findById(account.id)).isPresent();
        List<UUID> events = eventIds(account.id);
        assertThat(events).hasSize(1);
        assertThat(jdbc.queryForObject("SELECT tenant_id || '/' || actor_id || '/' || aggregate_type || '/' || event_type "
                + "|| '/' || event_version FROM outbox_event WHERE id = ?", String.class, events.get(0)))
                .isEqualTo("acme/alice/account/AccountOpened/1");
        assertThat(repository.findByOutboxEventId(events.get(0))).singleElement().satisfies(record -> {
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
    void the_aggregate_its_events_and_the_binding_roll_back_together_when_the_commit_fails() {
        String email = unique("taken");
        tx.executeWithoutResult(status -> accounts.save(JpaAccount.open("acme", "alice", email)));
        IdempotencyScope scope = freshScope();
        Claimed c = (Claimed) store.claim(scope, hashOf("{}"), ClaimPolicy.ofDefaults());
        JpaAccount duplicate = JpaAccount.open("acme", "bob", email);

        // Hibernate inserts the account only when the transaction flushes at commit, where the unique email fails
        assertThatThrownBy(() -> tx.executeWithoutResult(status -> {
            accounts.save(duplicate);
            store.bindOutboxEvent(c.token(), eventIds(duplicate.id).get(0)).orThrow(c.token());
            store.markSucceeded(c.token(), created("{}")).orThrow(c.token());
        })).rootCause().isInstanceOfSatisfying(SQLException.class,
                e -> assertThat(e.getSQLState()).as("unique_violation").isEqualTo("23505"));

        assertThat(accounts.findById(duplicate.id)).isEmpty();
        assertThat(eventIds(duplicate.id)).as("the event rolled back with the aggregate").isEmpty();
        IdempotencyRecord record = repository.findByTenantIdAndUserIdAndRouteAndIdempotencyKey(
                scope.tenantId(), scope.userId(), scope.route().value(), scope.key().value()).orElseThrow();
        assertThat(record.getStatus()).isEqualTo(IdempotencyStatus.PROCESSING);
        assertThat(record.getOutboxEventId()).isNull();
    }

    @Test
    void two_events_of_one_transaction_keep_their_order_and_an_unmapped_event_is_left_alone() {
        JpaAccount account = JpaAccount.open("acme", "alice", unique("grace")).rename("Grace H.").note("not for Kafka");

        tx.executeWithoutResult(status -> accounts.save(account));

        assertThat(jdbc.queryForList("SELECT event_type FROM outbox_event WHERE aggregate_id = ? ORDER BY seq", String.class,
                account.id.toString())).containsExactly("AccountOpened", "AccountRenamed");
    }

    @Test
    void an_event_published_by_hand_in_a_transaction_is_appended_and_a_mapper_bean_maps_a_foreign_type() {
        ApplicationEventPublisher events = context;
        UUID id = UUID.randomUUID();

        tx.executeWithoutResult(status -> {
            events.publishEvent(new AccountRenamed(id, "acme", "alice", "by hand"));
            events.publishEvent(new Foreign(id.toString()));
        });

        assertThat(jdbc.queryForList("SELECT event_type FROM outbox_event WHERE aggregate_id = ? ORDER BY seq", String.class,
                id.toString())).containsExactly("AccountRenamed", "ForeignHappened");
    }

    @Test
    void a_mapped_event_outside_a_transaction_is_an_error_that_names_its_type_and_writes_nothing() {
        UUID id = UUID.randomUUID();

        assertThatThrownBy(() -> context.publishEvent(new AccountRenamed(id, "acme", "alice", "no transaction")))
                .isInstanceOf(OutboxTransactionException.class).hasMessageContaining(AccountRenamed.class.getName());
        assertThat(eventIds(id)).isEmpty();
    }

    @Test
    void a_mapped_event_without_a_tenant_outside_a_guarded_call_is_refused_by_name() {
        assertThatThrownBy(() -> tx.executeWithoutResult(status ->
                context.publishEvent(new AccountRenamed(UUID.randomUUID(), null, "alice", "nobody's"))))
                .isInstanceOf(OnceException.class).hasMessageContaining(AccountRenamed.class.getName())
                .hasMessageContaining("tenant");
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

    private static List<UUID> eventIds(UUID aggregateId) {
        return jdbc.queryForList("SELECT id FROM outbox_event WHERE aggregate_id = ? ORDER BY seq", UUID.class,
                aggregateId.toString());
    }

    private static String unique(String name) {
        return name + "-" + UUID.randomUUID() + "@example.com";
    }

    /** An aggregate that registers its domain events; Spring Data publishes them when the repository saves it. */
    @Entity
    @Table(name = "jpa_account")
    static class JpaAccount extends AbstractAggregateRoot<JpaAccount> {

        @Id
        UUID id;

        @Column(name = "tenant_id")
        String tenantId;

        String email;

        String name;

        protected JpaAccount() {
        }

        static JpaAccount open(String tenant, String actor, String email) {
            JpaAccount account = new JpaAccount();
            account.id = UUID.randomUUID();
            account.tenantId = tenant;
            account.email = email;
            account.registerEvent(new AccountOpened(account.id, tenant, actor, email));
            return account;
        }

        JpaAccount rename(String newName) {
            name = newName;
            registerEvent(new AccountRenamed(id, tenantId, "alice", newName));
            return this;
        }

        JpaAccount note(String text) {
            registerEvent(new AccountNoted(id, text));
            return this;
        }
    }

    interface Accounts extends CrudRepository<JpaAccount, UUID> {
    }

    @OutboxMapping(aggregate = "account", aggregateId = "accountId", type = "AccountOpened")
    record AccountOpened(UUID accountId, String tenantId, String actorId, String email) {
    }

    @OutboxMapping(aggregate = "account", aggregateId = "accountId")
    record AccountRenamed(UUID accountId, String tenantId, String actorId, String name) {
    }

    /** Not mapped: an in-process event only. */
    record AccountNoted(UUID accountId, String text) {
    }

    /** A type the application does not own, mapped by an {@link OutboxEventMapper} bean. */
    record Foreign(String ref) {
    }

    @Configuration
    @EnableJpaRepositories(basePackageClasses = IdempotencyRecordRepository.class, considerNestedRepositories = true)
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

        @Bean
        OutboxEventMapper foreignEvents() {
            return event -> event instanceof Foreign foreign ? OutboxEvent.builder().tenantId("acme").actorId("system")
                    .aggregate("account", foreign.ref()).type("ForeignHappened", 1).payloadJson("{}") : null;
        }

        @Bean
        DomainEvents domainEvents(DataSource dataSource, List<OutboxEventMapper> mappers) {
            return new DomainEvents(OutboxWriter.create(dataSource), mappers);
        }
    }
}
