package dev.once.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.example.ReferenceServiceApplication;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.wire.RecordSigning;
import dev.once.wire.WireFormat;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The bad input corpus, against the reference service: every case gets a clear, specific error (problem+json with a
 * stable code over HTTP, the dead-letter topic with a reason on Kafka, exit code 2 or 3 from the CLI), nothing is
 * half-written, and the good input next to it still goes through.
 */
@ExtendWith(SummaryWatcher.class)
class BadInputIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(4);

    @TempDir
    static Path dataDir;

    static ConfigurableApplicationContext service;
    static RawHttp http;
    static JdbcTemplate jdbc;
    static String prefix;

    @BeforeAll
    static void start() {
        prefix = ("bad_" + db.schema()).toLowerCase();
        service = new SpringApplicationBuilder(ReferenceServiceApplication.class).run(
                "--server.port=0", "--spring.jmx.enabled=false",
                "--spring.datasource.url=" + db.jdbcUrl(),
                "--spring.datasource.username=" + db.server().username(),
                "--spring.datasource.password=" + db.server().password(),
                "--spring.kafka.bootstrap-servers=" + TestKafka.bootstrapServers(),
                "--once.reference.data-dir=" + dataDir, "--once.reference.topic-partitions=2",
                "--once.outbox.relay.mode=polling", "--once.outbox.relay.topic-prefix=" + prefix,
                "--once.dispatcher.group-id=" + prefix, "--once.dispatcher.max-attempts=2");
        http = new RawHttp(((WebServerApplicationContext) service).getWebServer().getPort());
        jdbc = new JdbcTemplate(db.dataSource());
    }

    @AfterAll
    static void stop() {
        service.close();
    }

    static final String ADA = "{\"name\":\"Ada\",\"email\":\"ada@example.com\"}";

    /** A bad request, the status and code it must get. */
    record Case(String name, byte[] body, int status, String code, String... headers) {
    }

    @Test
    void bad_keys_and_bodies_get_a_specific_problem_and_write_nothing() {
        String longBody = "{\"name\":\"" + "x".repeat(1_100_000) + "\",\"email\":\"a@example.com\"}";
        String deep = "{\"name\":" + "[".repeat(5_000) + "]".repeat(5_000) + ",\"email\":\"a@example.com\"}";
        List<Case> cases = List.of(
                new Case("empty key", ADA.getBytes(), 400, "IDEMPOTENCY_KEY_INVALID", "Idempotency-Key: "),
                new Case("256-character key", ADA.getBytes(), 400, "IDEMPOTENCY_KEY_INVALID", "Idempotency-Key: " + "k".repeat(256)),
                new Case("tab inside", ADA.getBytes(), 400, "IDEMPOTENCY_KEY_INVALID", "Idempotency-Key: a\tb"),
                new Case("non-ASCII bytes", ADA.getBytes(), 400, "REQUEST_REJECTED",
                        "Idempotency-Key: " + new String("ключ".getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1)),
                new Case("quoted, invalid escape", ADA.getBytes(), 400, "IDEMPOTENCY_KEY_INVALID", "Idempotency-Key: \"a\\b\""),
                new Case("quoted, never closed", ADA.getBytes(), 400, "IDEMPOTENCY_KEY_INVALID", "Idempotency-Key: \"abc"),
                new Case("duplicated header", ADA.getBytes(), 400, "IDEMPOTENCY_KEY_INVALID",
                        "Idempotency-Key: k-one", "Idempotency-Key: k-two"),
                new Case("malformed JSON", "{\"name\": ".getBytes(), 400, "MALFORMED_BODY", "Idempotency-Key: " + key()),
                new Case("deeply nested JSON", deep.getBytes(), 400, "MALFORMED_BODY", "Idempotency-Key: " + key()),
                new Case("body over the 1 MiB limit", longBody.getBytes(), 413, "CONTENT_TOO_LARGE", "Idempotency-Key: " + key()),
                new Case("invalid field", "{\"name\":\"Ada\",\"email\":\"nope\"}".getBytes(), 400, "VALIDATION_FAILED",
                        "Idempotency-Key: " + key()));
        long accounts = count("account");
        long outbox = count("outbox_event");
        List<String> wrong = new ArrayList<>();
        for (Case bad : cases) {
            RawHttp.Response response = http.post("/accounts", "alice", bad.body(), bad.headers());
            if (response.status() != bad.status() || !response.body().contains("\"code\":\"" + bad.code() + "\"")
                    || !String.valueOf(response.header("Content-Type")).startsWith("application/problem+json")) {
                wrong.add(bad.name() + ": " + response.status() + " " + response.body());
            }
        }
        // a bare CR or a control character is not HTTP: Tomcat refuses the request before any code runs
        assertThat(http.post("/accounts", "alice", ADA.getBytes(), "Idempotency-Key: a\rb").status()).isEqualTo(400);
        assertThat(http.post("/accounts", "alice", ADA.getBytes(), "Idempotency-Key: a\u0001b").status()).isEqualTo(400);

        Summary.record(new Summary.Row("bad input: keys and bodies over HTTP", cases.size() + 2, cases.size() + 2,
                count("account") - accounts, 0, wrong.isEmpty(), "each a problem+json with its code; nothing written"));
        assertThat(wrong).isEmpty();
        assertThat(count("account")).isEqualTo(accounts);
        assertThat(count("outbox_event")).isEqualTo(outbox);
    }

    @Test
    void a_key_sent_with_a_body_refused_before_the_work_ran_is_not_used_up_and_works_with_a_valid_body() {
        List<Case> refused = List.of(
                new Case("malformed JSON", "{\"name\": ".getBytes(), 400, "MALFORMED_BODY"),
                new Case("body over the 1 MiB limit", ("{\"name\":\"" + "x".repeat(1_100_000)
                        + "\",\"email\":\"a@example.com\"}").getBytes(), 413, "CONTENT_TOO_LARGE"));
        for (Case bad : refused) {
            String key = key();
            RawHttp.Response refusal = http.post("/accounts", "alice", bad.body(), "Idempotency-Key: " + key);
            RawHttp.Response valid = http.post("/accounts", "alice", ADA.getBytes(), "Idempotency-Key: " + key);
            RawHttp.Response repeat = http.post("/accounts", "alice", ADA.getBytes(), "Idempotency-Key: " + key);

            assertThat(refusal.status()).as(bad.name()).isEqualTo(bad.status());
            assertThat(refusal.body()).as(bad.name()).contains("\"code\":\"" + bad.code() + "\"");
            assertThat(valid.status()).as(bad.name() + ", then valid: " + valid.body()).isEqualTo(201);
            assertThat(valid.header("Idempotent-Replayed")).as(bad.name()).isNull();
            assertThat(repeat.header("Idempotent-Replayed")).as(bad.name()).isEqualTo("true");
            assertThat(id(repeat.body())).isEqualTo(id(valid.body()));
        }
    }

    @Test
    void a_quoted_key_with_escapes_works_and_crlf_in_a_key_cannot_inject_an_identity() {
        RawHttp.Response quoted = http.post("/accounts", "alice", ADA.getBytes(), "Idempotency-Key: \"q-\\\"x\\\"-\\\\\"");
        RawHttp.Response again = http.post("/accounts", "alice", ADA.getBytes(), "Idempotency-Key: \"q-\\\"x\\\"-\\\\\"");
        assertThat(quoted.status()).isEqualTo(201);
        assertThat(again.header("Idempotent-Replayed")).isEqualTo("true");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM idempotency_record WHERE idempotency_key = ?", Long.class,
                "q-\"x\"-\\")).isOne();

        // CRLF ends the header: what follows is another header, and no header can choose the tenant or user
        RawHttp.Response injected = http.post("/accounts", "alice", ADA.getBytes(),
                "Idempotency-Key: inj-" + UUID.randomUUID() + "\r\nX-Tenant-Id: globex\r\nX-User-Id: carol");
        assertThat(injected.status()).isEqualTo(201);
        assertThat(injected.body()).contains("\"tenant_id\":\"acme\"");
    }

    @Test
    void another_tenants_or_users_key_never_replays_and_guessed_ids_read_as_missing() {
        String key = key();
        RawHttp.Response alices = http.post("/accounts", "alice", ADA.getBytes(), "Idempotency-Key: " + key);
        String aliceAccount = id(alices.body());
        String aliceFile = id(http.post("/files", "alice", "{\"name\":\"a.txt\",\"content_base64\":\"aGk=\"}".getBytes(),
                "Idempotency-Key: " + key()).body());
        List<String> leaks = new ArrayList<>();
        for (String stranger : List.of("carol", "bob")) { // another tenant; the same tenant but another user
            RawHttp.Response theirs = http.post("/accounts", stranger, ADA.getBytes(), "Idempotency-Key: " + key);
            if (theirs.status() != 201 || theirs.header("Idempotent-Replayed") != null || id(theirs.body()).equals(aliceAccount)) {
                leaks.add(stranger + " replayed alice's key: " + theirs.status() + " " + theirs.body());
            }
        }
        for (String path : List.of("/accounts/" + aliceAccount, "/files/" + aliceFile)) {
            RawHttp.Response guessed = http.get(path, "carol");
            if (guessed.status() != 404 || !guessed.body().contains("\"code\":\"NOT_FOUND\"")) {
                leaks.add("carol reads " + path + ": " + guessed.status());
            }
        }
        RawHttp.Response complete = http.post("/files/" + aliceFile + "/complete", "carol", "{}".getBytes(),
                "Idempotency-Key: " + key());
        if (complete.status() != 404) {
            leaks.add("carol completes alice's upload: " + complete.status());
        }
        Summary.record(new Summary.Row("bad input: cross-tenant attempts", 5, 5, 0, 0, leaks.isEmpty(),
                "another tenant's or user's key is a new request; guessed ids are 404"));
        assertThat(leaks).isEmpty();
    }

    static String id(String json) {
        int at = json.indexOf("\"id\":\"");
        return at < 0 ? "" : json.substring(at + 6, json.indexOf('"', at + 6));
    }

    @Test
    void bad_kafka_records_are_dead_lettered_with_a_reason_and_the_partition_keeps_flowing() {
        String topic = prefix + ".account";
        UUID reused = UUID.randomUUID();
        Map<String, ProducerRecord<String, byte[]>> corpus = new LinkedHashMap<>();
        corpus.put("payload is not JSON", record(topic, "not json at all", headers(UUID.randomUUID(), "acme", "AccountCreated", "1")));
        Map<String, String> noEventId = headers(UUID.randomUUID(), "acme", "AccountCreated", "1");
        noEventId.remove(WireFormat.EVENT_ID);
        corpus.put("missing event_id", record(topic, "{}", noEventId));
        Map<String, String> forgedId = headers(UUID.randomUUID(), "acme", "AccountCreated", "1");
        forgedId.put(WireFormat.EVENT_ID, "not-a-uuid");
        corpus.put("forged event_id", record(topic, "{}", forgedId));
        Map<String, String> noTenant = headers(UUID.randomUUID(), "acme", "AccountCreated", "1");
        noTenant.remove(WireFormat.TENANT_ID);
        corpus.put("missing tenant_id", record(topic, "{}", noTenant));
        // not poison: a foreign type is skipped and counted, an unknown version of a handled type is held (its key parked)
        ProducerRecord<String, byte[]> foreign = record(topic, "{}", headers(UUID.randomUUID(), "acme", "AccountDeleted", "1"));
        UUID nextVersion = UUID.randomUUID();
        ProducerRecord<String, byte[]> unknownVersion = new ProducerRecord<>(topic, "next-version",
                "{}".getBytes(StandardCharsets.UTF_8));
        headers(nextVersion, "acme", "AccountCreated", "9").forEach((k, v) ->
                unknownVersion.headers().add(k, v.getBytes(StandardCharsets.UTF_8)));
        service.getBean(RecordSigning.class).sign(unknownVersion);
        corpus.put("no signature", unsigned(topic, "{\"email\":\"u@example.com\",\"name\":\"U\"}",
                headers(UUID.randomUUID(), "acme", "AccountCreated", "1")));
        ProducerRecord<String, byte[]> retenanted = record(topic, "{\"email\":\"t@example.com\",\"name\":\"T\"}",
                headers(UUID.randomUUID(), "acme", "AccountCreated", "1"));
        retenanted.headers().add(WireFormat.TENANT_ID, "globex".getBytes(StandardCharsets.UTF_8));
        corpus.put("tenant header changed after signing", retenanted);
        corpus.put("event id reused with another payload", record(topic, "{\"email\":\"b@example.com\",\"name\":\"B\"}",
                headers(reused, "acme", "AccountCreated", "1")));
        ProducerRecord<String, byte[]> first = record(topic, "{\"email\":\"a@example.com\",\"name\":\"A\"}",
                headers(reused, "acme", "AccountCreated", "1"));
        UUID good = UUID.randomUUID();
        ProducerRecord<String, byte[]> valid = record(topic, "{\"email\":\"ok@example.com\",\"name\":\"Ok\"}",
                headers(good, "acme", "AccountCreated", "1"));
        try (KafkaProducer<String, byte[]> producer = producer()) {
            TestKafka.sendAll(producer, List.of(first));
            await().atMost(Duration.ofSeconds(60)).until(() -> handled(reused) == 2);
            List<ProducerRecord<String, byte[]>> rest = new ArrayList<>(corpus.values());
            rest.add(foreign);
            rest.add(unknownVersion);
            rest.add(valid);
            TestKafka.sendAll(producer, rest);
        }

        await().atMost(Duration.ofSeconds(60)).until(() -> handled(good) == 2); // both handlers, after the bad ones
        List<ConsumerRecord<String, byte[]>> dead = deadLetters(topic + WireFormat.DEAD_LETTER_SUFFIX, corpus.size());
        Summary.record(new Summary.Row("bad input: Kafka records", corpus.size(), corpus.size(), handled(good) == 2 ? 0 : 1,
                handled(reused) - 2, dead.size() == corpus.size(), "each dead-lettered with its reason; the partition kept flowing"));
        assertThat(dead).hasSize(corpus.size());
        assertThat(dead).allSatisfy(r -> assertThat(r.headers().lastHeader(WireFormat.DLT_REASON)).isNotNull());
        assertThat(dead).extracting(r -> new String(r.headers().lastHeader(WireFormat.DLT_REASON).value(), StandardCharsets.UTF_8))
                .filteredOn(reason -> reason.startsWith("SIGNATURE_")).hasSize(2);
        assertThat(handled(reused)).isEqualTo(2); // the reused id's second payload had no effect
        assertThat(jdbc.queryForList("SELECT reason FROM once_parked_event WHERE event_id = ?", String.class,
                nextVersion.toString())).as("held until a v9 handler runs").containsExactly("held");
    }

    /** A CLI invocation, the exit code it must end with and what its output must say. */
    record Cli(String name, List<String> args, int exit, String says) {
    }

    /** What the CLI answered: its exit code and its output (stdout and stderr). */
    record Answer(int exit, String output) {
    }

    @Test
    void the_cli_refuses_wrong_flags_and_destructive_commands_without_yes_and_says_when_the_database_is_unreachable()
            throws Exception {
        List<String> connection = List.of("--jdbc-url=" + db.jdbcUrl(), "--db-user=" + db.server().username(),
                "--db-password=" + db.server().password());
        List<String> key = List.of("--tenant-id=acme", "--user-id=alice", "--route=POST /accounts", "--idempotency-key=k");
        List<Cli> cases = List.of(
                new Cli("unknown flag", concat(List.of("idempotency", "diagnose", "--no-such-flag"), key, connection),
                        2, "Unknown option: '--no-such-flag'"),
                new Cli("required flags missing", concat(List.of("idempotency", "diagnose"), connection),
                        2, "Missing required options: '--tenant-id=<tenantId>', '--user-id=<userId>', '--route=<route>', "
                                + "'--idempotency-key=<key>'"),
                new Cli("purge without --yes", concat(List.of("idempotency", "purge", "--older-than", "7d"), connection),
                        2, "core: purge deletes data: add --yes"),
                new Cli("malformed duration", concat(List.of("idempotency", "purge", "--older-than", "soon", "--yes"), connection),
                        2, "Invalid value for option '--older-than': 'soon' is not a duration such as 30s, 5m, 2h, 7d or PT5M"),
                new Cli("unreachable database", List.of("outbox", "status", "--jdbc-url=jdbc:postgresql://127.0.0.1:1/none",
                        "--db-user=x", "--db-password=never-printed"),
                        3, "core: cannot reach the database at jdbc:postgresql://127.0.0.1:1/none as x"));
        List<String> wrong = new ArrayList<>();
        for (Cli cli : cases) {
            Answer answer = core(cli.args());
            if (answer.exit() != cli.exit() || !answer.output().contains(cli.says()) || answer.output().contains("never-printed")) {
                wrong.add(cli.name() + " exited " + answer.exit() + ": " + answer.output());
            }
        }
        Summary.record(new Summary.Row("bad input: CLI", cases.size(), cases.size(), 0, 0, wrong.isEmpty(),
                "usage errors exit 2 naming the flag or --yes; an unreachable database exits 3 and says so"));
        assertThat(wrong).isEmpty();
    }

    @SafeVarargs
    static List<String> concat(List<String>... parts) {
        return java.util.Arrays.stream(parts).flatMap(List::stream).toList();
    }

    static Answer core(List<String> args) throws IOException, InterruptedException {
        Path jar = Path.of(System.getProperty("once.reliability.cli-jar", "../ops-cli/target/once-ops-cli.jar"));
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-jar", jar.toString()));
        command.addAll(args);
        Path output = Files.createTempFile(dataDir, "core-", ".out");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("core " + args + " did not finish");
        }
        return new Answer(process.exitValue(), Files.readString(output));
    }

    static long handled(UUID eventId) {
        return jdbc.queryForObject("SELECT count(*) FROM handler_effect WHERE event_id = ?", Long.class, eventId)
                + jdbc.queryForObject("SELECT count(*) FROM outbound_email WHERE event_id = ?", Long.class, eventId);
    }

    static List<ConsumerRecord<String, byte[]>> deadLetters(String topic, int expected) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, "dlt-reader-" + UUID.randomUUID());
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        List<ConsumerRecord<String, byte[]>> dead = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> consumer =
                     new KafkaConsumer<>(config, new StringDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                consumer.poll(Duration.ofMillis(200)).forEach(dead::add);
                return dead.size() >= expected;
            });
        }
        return dead;
    }

    static Map<String, String> headers(UUID eventId, String tenant, String type, String version) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put(WireFormat.EVENT_ID, eventId.toString());
        headers.put(WireFormat.TENANT_ID, tenant);
        headers.put(WireFormat.ACTOR_ID, "alice");
        headers.put(WireFormat.EVENT_TYPE, type);
        headers.put(WireFormat.EVENT_VERSION, version);
        return headers;
    }

    /** A record signed with the service's own key ring, as its relay signs: bad input from a producer that holds the key. */
    static ProducerRecord<String, byte[]> record(String topic, String payload, Map<String, String> headers) {
        ProducerRecord<String, byte[]> record = unsigned(topic, payload, headers);
        service.getBean(RecordSigning.class).sign(record);
        return record;
    }

    static ProducerRecord<String, byte[]> unsigned(String topic, String payload, Map<String, String> headers) {
        ProducerRecord<String, byte[]> record = new ProducerRecord<>(topic, "bad-input", payload.getBytes(StandardCharsets.UTF_8));
        headers.forEach((k, v) -> record.headers().add(k, v.getBytes(StandardCharsets.UTF_8)));
        return record;
    }

    static KafkaProducer<String, byte[]> producer() {
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        return new KafkaProducer<>(config, new StringSerializer(), new ByteArraySerializer());
    }

    static long count(String table) {
        return jdbc.queryForObject("SELECT count(*) FROM " + table, Long.class);
    }

    static String key() {
        return "bad-" + UUID.randomUUID();
    }
}
