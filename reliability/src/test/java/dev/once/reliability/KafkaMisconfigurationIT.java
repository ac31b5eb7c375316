package dev.once.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.once.OnceConfigurationException;
import dev.once.autoconfigure.OnceStoreAutoConfiguration;
import dev.once.dispatch.HandlerRegistration;
import dev.once.dispatch.KafkaEventDispatcher;
import dev.once.dispatch.autoconfigure.OnceDispatcherAutoConfiguration;
import dev.once.idempotency.OnceMigrations;
import dev.once.relay.PollingRelay;
import dev.once.relay.autoconfigure.OnceRelayAutoConfiguration;
import dev.once.test.SecuredKafka;
import dev.once.test.TestDatabase;
import dev.once.test.TestSigning;
import dev.once.wire.WireFormat;
import dev.once.wire.autoconfigure.OnceSigningAutoConfiguration;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * The bad Kafka configurations, one case each, against the relay's and the dispatcher's autoconfiguration on the
 * secured broker ({@link SecuredKafka}: SASL, TLS, ACLs, no topic created on first use): every one gets one clear
 * error, either a startup failure ({@link OnceConfigurationException}, the problem and the fix) or a health DOWN within
 * seconds whose reason names the fault and the fix, never silence and never a stack trace per retry. Every Kafka
 * setting comes from {@code spring.kafka.*}, as in an application.
 */
@ExtendWith(SummaryWatcher.class)
class KafkaMisconfigurationIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(6);

    /** A relay's first failure shows in its health within this. */
    static final Duration SOON = Duration.ofSeconds(20);

    static final String REFUSED = "Kafka refused the relay's credentials";

    final String prefix = "mis" + UUID.randomUUID().toString().substring(0, 8);
    final java.util.List<Runnable> detach = new java.util.ArrayList<>();

    @BeforeAll
    static void migrate() {
        OnceMigrations.migrate(db.dataSource());
    }

    @AfterEach
    void forgetTheEventsAndTheLog() {
        new JdbcTemplate(db.dataSource()).update("DELETE FROM outbox_event"); // the next case's relay must not see them
        detach.forEach(Runnable::run);
    }

    @Test
    void the_relay_with_a_wrong_sasl_password_is_down_naming_the_refused_credentials_and_says_so_once() {
        ListAppender<ILoggingEvent> log = capture(PollingRelay.class);
        relay(SecuredKafka.springSasl(SecuredKafka.USER, "not-the-password")).run(context -> {
            Health health = relayDown(context);

            assertThat(reason(health)).contains(REFUSED, "SaslAuthenticationException",
                    "check spring.kafka.* security settings").doesNotContain("not-the-password");
            List<ILoggingEvent> warnings = log.list.stream().filter(e -> e.getLevel() == Level.WARN).toList();
            assertThat(warnings).hasSize(1); // the next attempt is a minute away: no line, no trace per retry
            assertThat(warnings.get(0).getThrowableProxy()).isNull();
            row("the relay with a wrong SASL password", "relay health DOWN: " + REFUSED + " (SaslAuthentication"
                    + "Exception); one WARN line, no stack trace, retried once a minute");
        });
    }

    @Test
    void the_relay_that_does_not_trust_the_brokers_certificate_is_down_naming_the_tls_handshake() {
        relay(withoutTrustStore(SecuredKafka.springTls())).run(context -> {
            assertThat(reason(relayDown(context))).contains(REFUSED, "SslAuthenticationException", "PKIX");
            row("the relay without the broker's CA in its trust store", "relay health DOWN: " + REFUSED
                    + " (SslAuthenticationException, PKIX path building failed)");
        });
    }

    @Test
    void the_relay_whose_principal_may_not_write_is_down_naming_the_missing_grant() {
        SecuredKafka.createTopic(prefix + ".order", 1);
        insertEvent("order");
        relay(SecuredKafka.springSasl(SecuredKafka.STRANGER, SecuredKafka.STRANGER_PASSWORD)).run(context -> {
            assertThat(reason(relayDown(context))).contains(REFUSED, "not authorized", "grant it WRITE");
            row("the relay's principal without ACLs", "relay health DOWN: " + REFUSED + ": its principal is not "
                    + "authorized (...AuthorizationException); grant it WRITE and DESCRIBE");
        });
    }

    @Test
    void the_relay_with_kafka_unreachable_is_down_naming_the_address_and_how_long_it_waited() {
        String nowhere = "127.0.0.1:" + unusedPort();
        relay(List.of("spring.kafka.bootstrap-servers=" + nowhere)).run(context -> {
            assertThat(reason(relayDown(context))).contains("Kafka at " + nowhere + " did not answer within 3 s",
                    "spring.kafka.bootstrap-servers");
            row("the relay with Kafka unreachable", "relay health DOWN: Kafka at <bootstrap> did not answer within "
                    + "<ack-timeout>: check spring.kafka.bootstrap-servers");
        });
    }

    @Test
    void the_relay_publishing_to_a_topic_that_does_not_exist_is_down_naming_the_topic_and_how_to_create_it() {
        insertEvent("ghost");
        relay(SecuredKafka.springSasl(SecuredKafka.USER, SecuredKafka.PASSWORD)).run(context -> {
            assertThat(reason(relayDown(context))).contains("Topic " + prefix + ".ghost does not exist on Kafka at",
                    "kafka-topics.sh --create --topic " + prefix + ".ghost");
            row("the relay's topic missing, auto-creation off", "relay health DOWN: Topic <t> does not exist on "
                    + "Kafka at <bootstrap>: create it (kafka-topics.sh, a NewTopic bean) or route elsewhere");
        });
    }

    @Test
    void the_dispatcher_with_a_wrong_sasl_password_does_not_start_and_says_why() {
        consumedTopicAndDeadLetters();
        dispatcher(SecuredKafka.springSasl(SecuredKafka.USER, "not-the-password")).run(context -> {
            assertThat(startupFailure(context)).contains("refused the dispatcher's credentials",
                    "SaslAuthenticationException", "spring.kafka.security.protocol").doesNotContain("not-the-password");
            row("the dispatcher with a wrong SASL password", "startup fails: Kafka at <bootstrap> refused the "
                    + "dispatcher's credentials; check spring.kafka.* security settings");
        });
    }

    @Test
    void the_dispatcher_whose_consumer_is_refused_after_startup_is_down_and_does_not_retry() {
        consumedTopicAndDeadLetters();
        dispatcher(SecuredKafka.springSasl(SecuredKafka.USER, "not-the-password"), "once.dispatcher.check-topics=false")
                .run(context -> {
                    HealthIndicator indicator = context.getBean("onceDispatcherHealthIndicator", HealthIndicator.class);
                    await().atMost(SOON).until(() -> reason(indicator.health()).startsWith("Kafka refused"));

                    assertThat(indicator.health().getStatus()).isEqualTo(Status.DOWN);
                    assertThat(reason(indicator.health())).contains("Kafka refused the dispatcher's credentials",
                            "check spring.kafka.* security settings", "group " + prefix);
                    assertThat(context.getBean(KafkaEventDispatcher.class).assignedConsumers()).isZero();
                    row("the dispatcher's consumer refused at runtime", "dispatcher health DOWN: Kafka refused the "
                            + "dispatcher's credentials; the consumer stops (one error from spring-kafka, no retries)");
                });
    }

    @Test
    void the_dispatcher_consuming_a_topic_that_does_not_exist_does_not_start_and_names_it() {
        String topic = prefix + ".order";
        dispatcher(SecuredKafka.springSasl(SecuredKafka.USER, SecuredKafka.PASSWORD)).run(context -> {
            assertThat(startupFailure(context)).contains("once.dispatcher.topics names [" + topic + "]",
                    "the dead-letter topics [" + WireFormat.deadLetterTopic(topic) + "]", "Create them");
            row("a once.dispatcher.topics entry missing on the broker", "startup fails naming the topic and its "
                    + "dead-letter topic: create them or correct once.dispatcher.topics");
        });
    }

    @Test
    void the_dispatcher_without_a_dead_letter_topic_does_not_start_and_names_it() {
        String topic = prefix + ".order";
        SecuredKafka.createTopic(topic, 1);
        dispatcher(SecuredKafka.springSasl(SecuredKafka.USER, SecuredKafka.PASSWORD)).run(context -> {
            assertThat(startupFailure(context)).contains("the dead-letter topics [" + WireFormat.deadLetterTopic(topic)
                    + "]").doesNotContain("once.dispatcher.topics names");
            row("a dead-letter topic <topic>.dlt missing", "startup fails naming <topic>.dlt");
        });
    }

    @Test
    void a_handler_declaring_a_topic_the_dispatcher_does_not_consume_stops_the_startup() {
        consumedTopicAndDeadLetters();
        dispatcher(SecuredKafka.springSasl(SecuredKafka.USER, SecuredKafka.PASSWORD))
                .withBean("accounts", HandlerRegistration.class, () -> HandlerRegistration
                        .transactional("AccountCreated", 1, "account-projection", event -> { })
                        .onTopic(prefix + ".account"))
                .run(context -> {
                    assertThat(startupFailure(context)).contains("account-projection (AccountCreated v1, on "
                            + prefix + ".account)", "once.dispatcher.topics is [" + prefix + ".order]");
                    row("a handler whose topic is not among once.dispatcher.topics", "startup fails naming the "
                            + "handler, its declared topic (HandlerRegistration.onTopic) and the topics consumed");
                });
    }

    @Test
    void the_dispatcher_with_kafka_unreachable_does_not_start_and_names_the_address() {
        String nowhere = "127.0.0.1:" + unusedPort();
        dispatcher(List.of("spring.kafka.bootstrap-servers=" + nowhere)).run(context -> {
            assertThat(startupFailure(context)).contains("Kafka at " + nowhere + " did not answer within 10 s",
                    "spring.kafka.bootstrap-servers");
            row("the dispatcher with Kafka unreachable", "startup fails: Kafka at <bootstrap> did not answer within "
                    + "10 s; check spring.kafka.bootstrap-servers");
        });
    }

    private ApplicationContextRunner relay(List<String> kafka) {
        return base(kafka).withPropertyValues("once.outbox.relay.mode=polling", "once.outbox.relay.topic-prefix=" + prefix,
                "once.outbox.relay.ack-timeout=3s", "once.dispatcher.enabled=false");
    }

    private ApplicationContextRunner dispatcher(List<String> kafka, String... more) {
        return base(kafka).withPropertyValues("once.outbox.relay.enabled=false", "once.dispatcher.topics=" + prefix
                + ".order", "once.dispatcher.group-id=" + prefix).withPropertyValues(more)
                .withBean("orders", HandlerRegistration.class, () -> HandlerRegistration.transactional("OrderPlaced", 1,
                        "order-projection", event -> { }));
    }

    private static ApplicationContextRunner base(List<String> kafka) {
        DataSource shared = new DelegatingDataSource(db.dataSource());
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, OnceStoreAutoConfiguration.class,
                        OnceRelayAutoConfiguration.class, OnceDispatcherAutoConfiguration.class,
                        OnceSigningAutoConfiguration.class))
                .withPropertyValues(TestSigning.PROPERTY)
                .withBean(DataSource.class, () -> shared)
                .withBean(PlatformTransactionManager.class, () -> new DataSourceTransactionManager(shared))
                .withPropertyValues(kafka.toArray(String[]::new));
    }

    private void consumedTopicAndDeadLetters() {
        SecuredKafka.createTopic(prefix + ".order", 1);
        SecuredKafka.createTopic(WireFormat.deadLetterTopic(prefix + ".order"), 1);
    }

    private void insertEvent(String aggregateType) {
        new JdbcTemplate(db.dataSource()).update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version, payload)
                VALUES (gen_random_uuid(), 'acme', 'alice', ?, 'a-1', 'Happened', 1, convert_to('{}', 'UTF8'))
                """, aggregateType);
    }

    private static Health relayDown(AssertableApplicationContext context) {
        assertThat(context).hasNotFailed();
        HealthIndicator indicator = context.getBean("onceOutboxRelayHealthIndicator", HealthIndicator.class);
        await().atMost(SOON).until(() -> indicator.health().getStatus().equals(Status.DOWN));
        Health health = indicator.health();
        assertThat(health.getDetails()).containsEntry("state", "BACKING_OFF");
        return health;
    }

    private static String reason(Health health) {
        return String.valueOf(health.getDetails().get("reason"));
    }

    /** The problem and the fix of the {@link OnceConfigurationException} that stopped the startup. */
    private static String startupFailure(AssertableApplicationContext context) {
        assertThat(context).hasFailed();
        for (Throwable cause = context.getStartupFailure(); cause != null; cause = cause.getCause()) {
            if (cause instanceof OnceConfigurationException once) {
                return once.problem() + ". " + once.fix();
            }
        }
        throw new AssertionError("not an OnceConfigurationException", context.getStartupFailure());
    }

    private static List<String> withoutTrustStore(List<String> tls) {
        return tls.stream().filter(p -> !p.startsWith("spring.kafka.ssl.trust-store")).toList();
    }

    private ListAppender<ILoggingEvent> capture(Class<?> type) {
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        Logger logger = (Logger) LoggerFactory.getLogger(type);
        logger.addAppender(appender);
        detach.add(() -> logger.detachAppender(appender));
        return appender;
    }

    private static int unusedPort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort(); // nothing listens there once it is closed
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void row(String scenario, String answer) {
        Summary.record(new Summary.Row("bad configuration: " + scenario, 1, 1, 0, 0, true, answer));
    }
}
