package dev.once.dispatch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.idempotency.ClaimPolicy;
import dev.once.idempotency.HandlerClaims;
import dev.once.idempotency.HandlerClaimStore;
import dev.once.idempotency.OnceMigrations;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.wire.RecordSigning;
import dev.once.wire.SigningKeys;
import dev.once.wire.WireFormat;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * The dispatcher trusts a record's envelope (tenant, actor, event id, type, version) and payload only when its
 * signature verifies, on a real broker: a record re-sent under another tenant or actor, forged, changed or moved is
 * dead-lettered with the reason, takes no claim, runs no handler, and the records after it are handled. Records are
 * signed here as the relay signs them ({@link RecordSigning#sign(ProducerRecord)}, the call {@code KafkaTransport}
 * makes).
 */
class SignedEnvelopeIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(6);

    static final String SECRET_A = "the first key of the ring, 32 bytes or more";
    static final String SECRET_B = "the second key of the ring, rotated in later";
    static final RecordSigning SIGNED_BY_A = RecordSigning.require(SigningKeys.of(Map.of("a", SECRET_A), null));
    static final RecordSigning SIGNED_BY_B = RecordSigning.require(SigningKeys.of(Map.of("b", SECRET_B), null));
    static final RecordSigning RING_A_AND_B = RecordSigning.require(SigningKeys.of(Map.of("a", SECRET_A, "b", SECRET_B), "b"));

    static JdbcTemplate jdbc;
    static HandlerClaimStore store;
    static KafkaProducer<String, byte[]> producer;

    String topic;
    KafkaEventDispatcher dispatcher;
    final Queue<String> rejected = new ConcurrentLinkedQueue<>();
    final AtomicBoolean projectionDown = new AtomicBoolean();

    @BeforeAll
    static void setUpAll() {
        OnceMigrations.migrate(db.dataSource());
        jdbc = new JdbcTemplate(db.dataSource());
        jdbc.execute("CREATE TABLE effect (tenant_id text NOT NULL, actor_id text NOT NULL, event_id uuid NOT NULL)");
        store = HandlerClaimStore.create(db.dataSource());
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        producer = new KafkaProducer<>(config, new StringSerializer(), new ByteArraySerializer());
    }

    @BeforeEach
    void setUp() {
        topic = "s" + UUID.randomUUID().toString().substring(0, 8) + ".order";
        TestKafka.createTopic(topic, 1);
        TestKafka.createTopic(topic + WireFormat.DEAD_LETTER_SUFFIX, 1);
        TestKafka.createTopic(topic + ".other", 1);
        TestKafka.createTopic(topic + ".other" + WireFormat.DEAD_LETTER_SUFFIX, 1);
        jdbc.update("DELETE FROM effect");
    }

    @AfterEach
    void stop() {
        if (dispatcher != null) {
            dispatcher.close();
            dispatcher = null;
        }
    }

    /**
     * A dispatcher on {@code topic} and {@code topic.other} whose one handler records the tenant and actor it ran for;
     * started again, it resumes where the last one stopped (one consumer group per test).
     */
    void start(RecordSigning verifying, int maxAttempts) {
        stop();
        EventDispatcher core = new EventDispatcher(store, new DataSourceTransactionManager(db.dataSource()),
                List.of(HandlerRegistration.transactional("OrderPlaced", 1, "projection", event -> {
                    if (projectionDown.get()) {
                        throw new IllegalStateException("projection is down");
                    }
                    jdbc.update("INSERT INTO effect VALUES (?, ?, ?)", event.tenantId(), event.actorId(), event.eventId());
                })), ClaimPolicy.ofDefaults(), verifying, new DispatchListener() {
                    @Override
                    public void rejected(String code) {
                        rejected.add(code);
                    }
                });
        dispatcher = new KafkaEventDispatcher(TestKafka.bootstrapServers(), "g-" + topic, core, 1,
                maxAttempts, topic, topic + ".other");
        dispatcher.start();
    }

    void start(RecordSigning verifying) {
        start(verifying, 3);
    }

    /** An event as the relay writes it, unsigned: key o-1, so every record of a test shares one partition. */
    ProducerRecord<String, byte[]> event(UUID id, String tenant, String actor) {
        RecordHeaders headers = new RecordHeaders();
        headers.add(WireFormat.EVENT_ID, utf8(id.toString()));
        headers.add(WireFormat.TENANT_ID, utf8(tenant));
        headers.add(WireFormat.ACTOR_ID, utf8(actor));
        headers.add(WireFormat.AGGREGATE_TYPE, utf8("order"));
        headers.add(WireFormat.EVENT_TYPE, utf8("OrderPlaced"));
        headers.add(WireFormat.EVENT_VERSION, utf8("1"));
        headers.add(WireFormat.CONTENT_TYPE, utf8("application/json"));
        return new ProducerRecord<>(topic, null, "o-1", utf8("{\"order\":\"" + id + "\"}"), headers);
    }

    ProducerRecord<String, byte[]> event(UUID id) {
        return event(id, "acme", "alice");
    }

    /** {@code record} with the two signature headers of {@code signing} added, as the relay adds them. */
    static ProducerRecord<String, byte[]> signed(RecordSigning signing, ProducerRecord<String, byte[]> record) {
        signing.sign(record);
        return record;
    }

    /** A copy of {@code record}, headers and all, on another topic, key or value; a header replaced when named. */
    static ProducerRecord<String, byte[]> copy(ProducerRecord<String, byte[]> record, String topic, String key,
                                               byte[] value, String header, String headerValue) {
        RecordHeaders headers = new RecordHeaders();
        for (Header h : record.headers()) {
            headers.add(h.key(), h.key().equals(header) ? utf8(headerValue) : h.value());
        }
        return new ProducerRecord<>(topic, null, key, value, headers);
    }

    static ProducerRecord<String, byte[]> withHeader(ProducerRecord<String, byte[]> record, String header, String value) {
        return copy(record, record.topic(), record.key(), record.value(), header, value);
    }

    @SafeVarargs
    final void send(ProducerRecord<String, byte[]>... records) {
        TestKafka.sendAll(producer, List.of(records));
    }

    long effects(UUID id) {
        return jdbc.queryForObject("SELECT count(*) FROM effect WHERE event_id = ?", Long.class, id);
    }

    long claims(UUID id) {
        return jdbc.queryForObject("SELECT count(*) FROM once_handler_claim WHERE event_id = ?", Long.class, id);
    }

    /** Waits until {@code marker}, sent after the records under test on the same partition, has been handled. */
    void handledUpTo(UUID marker) {
        await().atMost(Duration.ofSeconds(60)).until(() -> effects(marker) == 1);
    }

    @Test
    void a_real_event_re_sent_under_another_tenant_or_actor_is_refused_as_invalid_and_writes_nothing() {
        start(SIGNED_BY_A);
        UUID id = UUID.randomUUID();
        ProducerRecord<String, byte[]> real = signed(SIGNED_BY_A, event(id));
        ProducerRecord<String, byte[]> appendedTenant = copy(real, real.topic(), real.key(), real.value(), null, null);
        appendedTenant.headers().add(WireFormat.TENANT_ID, utf8("globex")); // a second header: the last one counts
        UUID marker = UUID.randomUUID();

        send(withHeader(real, WireFormat.TENANT_ID, "globex"), withHeader(real, WireFormat.ACTOR_ID, "mallory"),
                appendedTenant, signed(SIGNED_BY_A, event(marker)));

        handledUpTo(marker);
        assertThat(effects(id)).as("written to neither tenant").isZero();
        assertThat(claims(id)).as("no claim taken for a refused record").isZero();
        List<ConsumerRecord<String, byte[]>> dead = deadLetters(topic, 3);
        assertThat(dead).extracting(r -> header(r, WireFormat.DLT_REASON))
                .allSatisfy(reason -> assertThat(reason).startsWith("SIGNATURE_INVALID: "));
        assertThat(rejected).containsExactly("SIGNATURE_INVALID", "SIGNATURE_INVALID", "SIGNATURE_INVALID");

        send(real);
        await().atMost(Duration.ofSeconds(60)).until(() -> effects(id) == 1);
        assertThat(jdbc.queryForObject("SELECT tenant_id || '/' || actor_id FROM effect WHERE event_id = ?", String.class, id))
                .isEqualTo("acme/alice");
    }

    @Test
    void a_forged_record_without_a_signature_or_signed_with_an_unknown_key_is_dead_lettered() {
        start(SIGNED_BY_A);
        UUID unsigned = UUID.randomUUID();
        UUID unknownKey = UUID.randomUUID();
        UUID marker = UUID.randomUUID();

        send(event(unsigned), signed(SIGNED_BY_B, event(unknownKey)), signed(SIGNED_BY_A, event(marker)));

        handledUpTo(marker);
        assertThat(effects(unsigned) + effects(unknownKey) + claims(unsigned) + claims(unknownKey)).isZero();
        assertThat(deadLetters(topic, 2)).extracting(r -> header(r, WireFormat.DLT_REASON)).satisfiesExactly(
                reason -> assertThat(reason).startsWith("SIGNATURE_MISSING: "),
                reason -> assertThat(reason).startsWith("SIGNATURE_UNKNOWN_KEY: ").contains("key 'b'"));
        assertThat(rejected).containsExactly("SIGNATURE_MISSING", "SIGNATURE_UNKNOWN_KEY");
    }

    @Test
    void ed25519_relays_sign_consumers_hold_public_keys_only_and_cannot_forge_an_accepted_record() throws Exception {
        java.security.KeyPair relayKey = java.security.KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        java.security.KeyPair otherKey = java.security.KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        String relayPublic = base64(relayKey.getPublic().getEncoded());
        RecordSigning relay = RecordSigning.require(SigningKeys.builder()
                .ed25519("r1", relayPublic, base64(relayKey.getPrivate().getEncoded())).build());
        RecordSigning consumer = RecordSigning.require(SigningKeys.builder().ed25519("r1", relayPublic, null).build());
        // what a consumer holding the public ring could try: its own key pair, or an HMAC secret, under the relay's id
        RecordSigning forgerWithOwnPair = RecordSigning.require(SigningKeys.builder()
                .ed25519("r1", base64(otherKey.getPublic().getEncoded()), base64(otherKey.getPrivate().getEncoded()))
                .build());
        RecordSigning forgerWithSecret = RecordSigning.require(SigningKeys.of(Map.of("r1", relayPublic), null));
        start(consumer);
        UUID real = UUID.randomUUID();
        UUID forged = UUID.randomUUID();
        UUID forgedToo = UUID.randomUUID();
        UUID marker = UUID.randomUUID();

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> consumer.sign(event(UUID.randomUUID())))
                .hasMessageContaining("public keys only");
        send(signed(relay, event(real)), signed(forgerWithOwnPair, event(forged, "globex", "mallory")),
                signed(forgerWithSecret, event(forgedToo, "globex", "mallory")), signed(relay, event(marker)));

        handledUpTo(marker);
        assertThat(effects(real)).isEqualTo(1);
        assertThat(effects(forged) + effects(forgedToo) + claims(forged) + claims(forgedToo)).isZero();
        assertThat(deadLetters(topic, 2)).extracting(r -> header(r, WireFormat.DLT_REASON))
                .allSatisfy(reason -> assertThat(reason).startsWith("SIGNATURE_INVALID: "));
        assertThat(rejected).containsExactly("SIGNATURE_INVALID", "SIGNATURE_INVALID");
    }

    private static String base64(byte[] der) {
        return java.util.Base64.getEncoder().encodeToString(der);
    }

    @Test
    void a_record_of_a_wire_format_this_version_does_not_read_is_dead_lettered_naming_it() {
        start(SIGNED_BY_A);
        UUID future = UUID.randomUUID();
        UUID current = UUID.randomUUID();
        UUID marker = UUID.randomUUID();
        ProducerRecord<String, byte[]> v2 = event(future);
        v2.headers().add(WireFormat.FORMAT, utf8("2"));
        ProducerRecord<String, byte[]> v1 = event(current);
        v1.headers().add(WireFormat.FORMAT, utf8(WireFormat.FORMAT_VERSION));

        send(signed(SIGNED_BY_A, v2), signed(SIGNED_BY_A, v1), signed(SIGNED_BY_A, event(marker)));

        handledUpTo(marker);
        assertThat(effects(current)).as("version 1, and records written before the header, are read").isEqualTo(1);
        assertThat(effects(future) + claims(future)).isZero();
        assertThat(deadLetters(topic, 1)).extracting(r -> header(r, WireFormat.DLT_REASON))
                .singleElement().satisfies(reason -> assertThat(reason).contains("Wire format 2 is not one this "
                        + "dispatcher reads (1)"));
    }

    @Test
    void a_payload_changed_by_one_byte_or_a_record_moved_to_another_topic_or_key_is_refused() {
        start(SIGNED_BY_A);
        UUID id = UUID.randomUUID();
        ProducerRecord<String, byte[]> real = signed(SIGNED_BY_A, event(id));
        byte[] changed = real.value().clone();
        changed[changed.length - 3] ^= 1;
        UUID marker = UUID.randomUUID();

        send(copy(real, topic, real.key(), changed, null, null), copy(real, topic, "o-2", real.value(), null, null),
                copy(real, topic + ".other", real.key(), real.value(), null, null), signed(SIGNED_BY_A, event(marker)));

        handledUpTo(marker);
        assertThat(deadLetters(topic, 2)).hasSize(2);
        assertThat(deadLetters(topic + ".other", 1)).hasSize(1);
        assertThat(effects(id) + claims(id)).isZero();
        assertThat(rejected).containsExactly("SIGNATURE_INVALID", "SIGNATURE_INVALID", "SIGNATURE_INVALID");
    }

    @Test
    void keys_rotate_without_downtime_and_a_removed_key_no_longer_verifies() {
        start(RING_A_AND_B); // B signs now, A still verifies
        UUID byA = UUID.randomUUID();
        UUID byB = UUID.randomUUID();
        send(signed(SIGNED_BY_A, event(byA)), signed(RING_A_AND_B, event(byB)), signed(SIGNED_BY_A, event(byA)));

        await().atMost(Duration.ofSeconds(60)).until(() -> effects(byA) == 1 && effects(byB) == 1);
        assertThat(rejected).isEmpty();

        start(SIGNED_BY_B); // A removed from the ring
        UUID lateA = UUID.randomUUID();
        UUID marker = UUID.randomUUID();
        send(signed(SIGNED_BY_A, event(lateA)), signed(SIGNED_BY_B, event(marker)));

        handledUpTo(marker);
        assertThat(effects(lateA)).isZero();
        assertThat(header(deadLetterOf(lateA), WireFormat.DLT_REASON)).startsWith("SIGNATURE_UNKNOWN_KEY: ");
        assertThat(rejected).contains("SIGNATURE_UNKNOWN_KEY");
        assertThat(effects(byA)).as("the A-signed event, delivered twice, took effect once").isEqualTo(1);
    }

    @Test
    void a_dead_letter_re_published_to_its_topic_after_a_retry_verifies_and_is_handled_once() {
        projectionDown.set(true);
        start(SIGNED_BY_A, 1);
        UUID id = UUID.randomUUID();
        send(signed(SIGNED_BY_A, event(id)));
        ConsumerRecord<String, byte[]> dead = deadLetters(topic, 1).get(0);
        assertThat(header(dead, WireFormat.DLT_REASON)).contains("projection is down");

        // the operator repairs the handler, lets it run again, and re-publishes the dead letter as it is
        projectionDown.set(false);
        assertThat(HandlerClaims.create(db.dataSource()).retry(id.toString(), "projection",
                new dev.once.audit.Operator("ops", dev.once.audit.Operator.API, "projection repaired"))).isEqualTo(1);
        RecordHeaders headers = new RecordHeaders();
        dead.headers().forEach(h -> headers.add(h.key(), h.value()));
        send(new ProducerRecord<>(topic, null, dead.key(), dead.value(), headers));

        await().atMost(Duration.ofSeconds(60)).until(() -> effects(id) == 1);
        assertThat(rejected).isEmpty();
    }

    @Test
    void verify_if_present_handles_unsigned_records_and_still_refuses_a_bad_signature() {
        start(RecordSigning.of(RecordSigning.Mode.VERIFY_IF_PRESENT, SigningKeys.of(Map.of("a", SECRET_A), null)));
        UUID unsigned = UUID.randomUUID();
        UUID tampered = UUID.randomUUID();
        UUID marker = UUID.randomUUID();

        send(event(unsigned), withHeader(signed(SIGNED_BY_A, event(tampered)), WireFormat.TENANT_ID, "globex"),
                signed(SIGNED_BY_A, event(marker)));

        handledUpTo(marker);
        assertThat(effects(unsigned)).isEqualTo(1);
        assertThat(effects(tampered)).isZero();
        assertThat(rejected).containsExactly("SIGNATURE_INVALID");
    }

    List<ConsumerRecord<String, byte[]>> deadLetters(String topic, int count) {
        return deadLettersUntil(topic, records -> records.size() >= count);
    }

    /** The dead letter of event {@code id} on {@code topic}'s dead-letter topic, once it is there. */
    ConsumerRecord<String, byte[]> deadLetterOf(UUID id) {
        return deadLettersUntil(topic, records -> records.stream().anyMatch(r -> id.toString().equals(
                header(r, WireFormat.EVENT_ID)))).stream().filter(r -> id.toString().equals(header(r, WireFormat.EVENT_ID)))
                .findFirst().orElseThrow();
    }

    /** The records of {@code topic}'s dead-letter topic, read from the start until {@code enough} holds. */
    List<ConsumerRecord<String, byte[]>> deadLettersUntil(String topic, Predicate<List<ConsumerRecord<String, byte[]>>> enough) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "dlt-" + UUID.randomUUID());
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<ConsumerRecord<String, byte[]>> records = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(config, new StringDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic + WireFormat.DEAD_LETTER_SUFFIX));
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                consumer.poll(Duration.ofMillis(200)).forEach(records::add);
                return enough.test(records);
            });
        }
        return records;
    }

    static String header(ConsumerRecord<String, byte[]> record, String name) {
        return record.headers().lastHeader(name) == null ? null
                : new String(record.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
    }

    private static byte[] utf8(String text) {
        return text == null ? null : text.getBytes(StandardCharsets.UTF_8);
    }
}
