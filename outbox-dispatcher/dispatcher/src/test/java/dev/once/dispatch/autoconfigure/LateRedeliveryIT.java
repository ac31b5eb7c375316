package dev.once.dispatch.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.once.OnceConfigurationException;
import dev.once.autoconfigure.OnceStoreAutoConfiguration;
import dev.once.dispatch.HandlerRegistration;
import dev.once.idempotency.ClaimPartitions;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.wire.WireFormat;
import dev.once.wire.autoconfigure.OnceSigningAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * Exactly once for as long as Kafka can deliver again. A handler's claim is kept for
 * {@code once.dispatcher.claim-retention}, apart from the request TTL ({@code once.idempotency.ttl}, here 1 s): a
 * consumer group reset to earliest, or a dead letter re-published, long after the request TTL but within the claim
 * retention, is skipped. Where the claim lives decides how long exactly: a claim of a UUIDv7 event lives in its event's
 * day and is kept until that day's partition is dropped (the end of the day plus the claim retention); an event whose
 * id is no UUIDv7, or that is already older than the claim retention when first claimed, is claimed undated and kept
 * the claim retention after its claim. After that the redelivery is a new event for the handler, as documented.
 * Startup compares the topics' retention with the claims' and says so.
 */
class LateRedeliveryIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(6);

    static JdbcTemplate jdbc;

    @BeforeAll
    static void effects() {
        jdbc = new JdbcTemplate(db.dataSource());
        jdbc.execute("CREATE TABLE IF NOT EXISTS late_effect (event_id uuid NOT NULL, handler text NOT NULL)");
    }

    private ApplicationContextRunner runner(String topic, String group, String claimRetention) {
        DataSource shared = new DelegatingDataSource(db.dataSource());
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(KafkaAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
                        OnceStoreAutoConfiguration.class, OnceSigningAutoConfiguration.class,
                        OnceDispatcherAutoConfiguration.class))
                .withBean(DataSource.class, () -> shared)
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withUserConfiguration(Handlers.class)
                .withPropertyValues("spring.kafka.bootstrap-servers=" + TestKafka.bootstrapServers(),
                        "once.dispatcher.topics=" + topic, "once.dispatcher.group-id=" + group,
                        "once.dispatcher.claim-retention=" + claimRetention, "once.dispatcher.max-attempts=1",
                        "once.idempotency.ttl=1s", "once.outbox.signing.mode=off");
    }

    /** The handlers write through the application's DataSource bean, so that their writes join the claim's transaction. */
    @Configuration(proxyBeanMethods = false)
    static class Handlers {

        @Bean
        HandlerRegistration projection(DataSource dataSource) {
            return HandlerRegistration.transactional("OrderPlaced", 1, "projection",
                    event -> new JdbcTemplate(dataSource).update("INSERT INTO late_effect VALUES (?, ?)", event.eventId(), "projection"));
        }

        @Bean
        HandlerRegistration broken(DataSource dataSource) {
            return HandlerRegistration.transactional("OrderBroken", 1, "broken", event -> {
                new JdbcTemplate(dataSource).update("INSERT INTO late_effect VALUES (?, ?)", event.eventId(), "broken");
                throw new IllegalStateException("broken for good");
            });
        }
    }

    @Test
    void a_group_reset_to_earliest_after_the_request_ttl_but_within_the_claim_retention_is_skipped() throws Exception {
        String topic = topic();
        long eventMillis = System.currentTimeMillis();
        UUID event = send(topic, "OrderPlaced", uuidV7(eventMillis)); // as the outbox names its events
        String group = "late-" + UUID.randomUUID();

        runner(topic, group, "1h").run(context -> await().atMost(Duration.ofSeconds(60)).until(() -> effects(event) == 1));
        awaitOlderThanTheRequestTtl(event);
        resetToEarliest(group, topic);
        runner(topic, group, "1h").run(context -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            await().atMost(Duration.ofSeconds(60)).until(() -> skipped(meters, "projection") == 1);

            // kept in its event's day, until that day's partition is dropped: the claim retention after the day ends
            int day = (int) Math.floorDiv(eventMillis, DAY_MILLIS);
            assertThat(claimDay(event)).as("dated: in the partition of its event's day").isEqualTo(day);
            assertThat(jdbc.queryForObject("SELECT kept_until FROM once_handler_claim WHERE event_id = ?",
                    java.sql.Timestamp.class, event)).as("a dated claim is kept by its day, not by row").isNull();
            assertThat(context.getBean(ClaimPartitions.class).partitions())
                    .filteredOn(p -> p.day() == day).singleElement().satisfies(p -> {
                        assertThat(p.date()).isEqualTo(LocalDate.ofEpochDay(day));
                        assertThat(p.dropAtMillis()).isEqualTo((day + 1L) * DAY_MILLIS + Duration.ofHours(1).toMillis());
                        assertThat(p.dropAtMillis() - eventMillis).as("at least the claim retention after the event")
                                .isGreaterThanOrEqualTo(Duration.ofHours(1).toMillis());
                    });
        });

        assertThat(effects(event)).isEqualTo(1);
    }

    @Test
    void an_event_already_older_than_the_claim_retention_is_claimed_undated_and_kept_the_retention_after_its_claim()
            throws Exception {
        String topic = topic();
        UUID event = send(topic, "OrderPlaced", uuidV7(System.currentTimeMillis() - Duration.ofHours(2).toMillis()));
        String group = "late-" + UUID.randomUUID();

        runner(topic, group, "1h").run(context -> await().atMost(Duration.ofSeconds(60)).until(() -> effects(event) == 1));
        assertThat(claimDay(event)).as("its day may be gone already: undated").isZero();
        assertThat(jdbc.queryForObject("SELECT CAST(round(EXTRACT(EPOCH FROM kept_until - now()) / 60) AS bigint) FROM once_handler_claim "
                + "WHERE event_id = ?", Long.class, event)).as("kept the claim retention (1 h) after its claim, in minutes")
                .isEqualTo(60);
        awaitOlderThanTheRequestTtl(event);
        resetToEarliest(group, topic);
        runner(topic, group, "1h").run(context -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            await().atMost(Duration.ofSeconds(60)).until(() -> skipped(meters, "projection") == 1);
        });

        assertThat(effects(event)).isEqualTo(1);
    }

    @Test
    void a_dead_letter_re_published_after_the_request_ttl_is_skipped_while_its_failed_claim_is_kept() throws Exception {
        String topic = topic();
        UUID event = send(topic, "OrderBroken", uuidV7(System.currentTimeMillis()));
        String group = "late-" + UUID.randomUUID();
        // parking off: retried in place, then dead-lettered with a failed claim (parking keeps it in PostgreSQL)
        runner(topic, group, "1h").withPropertyValues("once.dispatcher.parking.enabled=false").run(context ->
                await().atMost(Duration.ofSeconds(60)).until(() -> deadLetters(topic).size() == 1));
        awaitOlderThanTheRequestTtl(event);

        republish(deadLetters(topic).get(0), topic);
        runner(topic, group, "1h").withPropertyValues("once.dispatcher.parking.enabled=false").run(context -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            // the re-published copy, and the original too when its offset was not committed before the stop
            await().atMost(Duration.ofSeconds(60)).until(() -> skipped(meters, "broken") >= 1);
        });

        assertThat(effects(event)).as("the broken handler's writes rolled back each time").isZero();
        assertThat(deadLetters(topic)).as("not dead-lettered a second time").hasSize(1);
    }

    @Test
    void after_the_claim_retention_a_redelivery_of_an_undated_claim_is_a_new_event_for_the_handler() throws Exception {
        String topic = topic();
        UUID event = send(topic, "OrderPlaced", UUID.randomUUID()); // no UUIDv7: no time, so kept by row
        String group = "late-" + UUID.randomUUID();
        runner(topic, group, "3s").withPropertyValues("once.dispatcher.lease=1s")
                .run(context -> await().atMost(Duration.ofSeconds(60)).until(() -> effects(event) == 1));
        assertThat(claimDay(event)).as("undated").isZero();

        await().atMost(Duration.ofSeconds(30)).until(() -> Boolean.TRUE.equals(jdbc.queryForObject(
                "SELECT kept_until < now() FROM once_handler_claim WHERE event_id = ?", Boolean.class, event)));
        resetToEarliest(group, topic);
        runner(topic, group, "3s").withPropertyValues("once.dispatcher.lease=1s")
                .run(context -> await().atMost(Duration.ofSeconds(60)).until(() -> effects(event) == 2));
    }

    @Test
    void a_topic_that_keeps_records_longer_than_the_claims_is_reported_with_both_figures_or_refused() throws Exception {
        String topic = "late" + UUID.randomUUID().toString().substring(0, 8) + ".order";
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1)
                    .configs(Map.of("retention.ms", Long.toString(Duration.ofDays(30).toMillis()))))).all().get();
        }
        TestKafka.createTopic(topic + WireFormat.DEAD_LETTER_SUFFIX, 1);
        Logger logger = (Logger) LoggerFactory.getLogger(TopicRetention.class);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        logger.addAppender(logged);

        runner(topic, "g-" + topic, "7d").run(context -> assertThat(context).hasNotFailed());
        runner(topic, "g-" + topic, "7d").withPropertyValues("once.dispatcher.retention-check=fail")
                .run(context -> assertThat(context.getStartupFailure()).rootCause()
                        .isInstanceOf(OnceConfigurationException.class).hasMessageContaining("PT720H")
                        .hasMessageContaining("once.dispatcher.claim-retention"));

        logger.detachAppender(logged);
        assertThat(logged.list).singleElement().satisfies(e -> assertThat(e.getFormattedMessage())
                .contains("topic " + topic + " keeps records PT720H").contains("claims are kept PT168H"));
    }

    private static String topic() {
        String topic = "late" + UUID.randomUUID().toString().substring(0, 8) + ".order";
        TestKafka.createTopic(topic, 1);
        TestKafka.createTopic(topic + WireFormat.DEAD_LETTER_SUFFIX, 1);
        return topic;
    }

    private static final long DAY_MILLIS = 86_400_000L;

    /** A UUIDv7 carrying {@code millis}, as the outbox's event ids do. */
    private static UUID uuidV7(long millis) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        long msb = (millis << 16) | 0x7000L | random.nextInt(0x1000);
        long lsb = (random.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(msb, lsb);
    }

    private static UUID send(String topic, String type, UUID id) {
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, "o-1", "{}".getBytes(StandardCharsets.UTF_8));
        for (String[] h : new String[][] {{WireFormat.EVENT_ID, id.toString()}, {WireFormat.TENANT_ID, "acme"},
                {WireFormat.ACTOR_ID, "alice"}, {WireFormat.EVENT_TYPE, type}, {WireFormat.EVENT_VERSION, "1"}}) {
            record.headers().add(h[0], h[1].getBytes(StandardCharsets.UTF_8));
        }
        try (KafkaProducer<String, byte[]> producer = producer()) {
            TestKafka.sendAll(producer, List.of(record));
        }
        return id;
    }

    private static void republish(ConsumerRecord<String, byte[]> deadLetter, String topic) {
        ProducerRecord<String, byte[]> again = new ProducerRecord<>(topic, deadLetter.key(), deadLetter.value());
        deadLetter.headers().forEach(h -> again.headers().add(h));
        try (KafkaProducer<String, byte[]> producer = producer()) {
            TestKafka.sendAll(producer, List.of(again));
        }
    }

    private static KafkaProducer<String, byte[]> producer() {
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        return new KafkaProducer<>(config, new StringSerializer(), new ByteArraySerializer());
    }

    private static List<ConsumerRecord<String, byte[]>> deadLetters(String topic) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "dlt-" + UUID.randomUUID());
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<ConsumerRecord<String, byte[]>> dead = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer =
                     new KafkaConsumer<>(config, new StringDeserializer(), new ByteArrayDeserializer())) {
            TopicPartition partition = new TopicPartition(topic + WireFormat.DEAD_LETTER_SUFFIX, 0);
            consumer.assign(List.of(partition));
            long end = consumer.endOffsets(List.of(partition)).get(partition);
            consumer.seekToBeginning(List.of(partition));
            while (consumer.position(partition) < end) {
                consumer.poll(Duration.ofMillis(200)).forEach(dead::add);
            }
        }
        return dead;
    }

    private static void resetToEarliest(String group, String topic) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers()))) {
            admin.alterConsumerGroupOffsets(group, Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(0)))
                    .all().get();
        }
    }

    /**
     * Waits until the event's claims are older than the request TTL (1 s). A claim row carries no time of its own: the
     * claims exist now, so they are older than 1 s once a second more has passed.
     */
    private static void awaitOlderThanTheRequestTtl(UUID event) throws InterruptedException {
        await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM once_handler_claim WHERE event_id = ?", Long.class, event) > 0);
        java.sql.Timestamp claimed = jdbc.queryForObject("SELECT statement_timestamp()", java.sql.Timestamp.class);
        await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                "SELECT statement_timestamp() > CAST(? AS timestamptz) + interval '1100 milliseconds'", Boolean.class, claimed));
    }

    /** The day the event's claim lives in: days since 1970-01-01, 0 when undated. */
    private static int claimDay(UUID event) {
        return jdbc.queryForObject("SELECT day FROM once_handler_claim WHERE event_id = ?", Integer.class, event);
    }

    private static long effects(UUID event) {
        return jdbc.queryForObject("SELECT count(*) FROM late_effect WHERE event_id = ?", Long.class, event);
    }

    private static double skipped(MeterRegistry meters, String handler) {
        var counter = meters.find("once.dispatcher.skipped").tag("handler", handler).counter();
        return counter == null ? 0 : counter.count();
    }
}
