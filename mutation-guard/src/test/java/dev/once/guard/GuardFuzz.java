package dev.once.guard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.test.JsonDocuments;
import dev.once.test.TestDatabase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Base64;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.statistics.Statistics;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Grammar-based fuzzing of the whole request path, over real HTTP, against the guard's test application on a real
 * PostgreSQL: JSON documents with numbers of every spelling and magnitude, strings with every class of escape, unpaired
 * surrogates and U+0000, deep nesting, duplicate members, huge arrays and long strings, bytes that are not UTF-8, and
 * keys and Content-Types at their edges, sent to a route that stores the document in a {@code jsonb} column. Whatever
 * arrives, the answer is a success or a client error with a {@code code}, never a 5xx; a retry of the same bytes
 * answers the same; a changed value under a used key is a conflict. The seed of a failure is printed by jqwik. One
 * property, run on each stack by a subclass that starts its service ({@link #start}): 2,000 tries on Spring MVC, 500
 * on each WebFlux stack, which shares the guard's parsing and adds its HTTP layer.
 */
abstract class GuardFuzz {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final AtomicLong KEYS = new AtomicLong();
    private static final String PREFIX = "{\"n\":1,\"v\":";

    private static TestDatabase db;
    private static ConfigurableApplicationContext app;
    private static HttpClient client;
    private static String base;

    /** Starts {@code application} with {@code properties} on a database of its own, as the service under test. */
    static void start(String name, Class<?> application, String... properties) throws SQLException {
        db = TestDatabase.create().poolSize(10).start(name);
        java.util.List<String> all = new java.util.ArrayList<>(java.util.List.of(
                "server.port=0",
                "spring.datasource.url=" + db.jdbcUrl(),
                "spring.datasource.username=" + db.server().username(),
                "spring.datasource.password=" + db.server().password(),
                "spring.jpa.hibernate.ddl-auto=create",
                "spring.jpa.open-in-view=false"));
        all.addAll(java.util.List.of(properties));
        app = new SpringApplicationBuilder(application).properties(all.toArray(String[]::new)).run();
        int port = ((WebServerApplicationContext) app).getWebServer().getPort();
        base = "http://127.0.0.1:" + port;
        client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    }

    static void stop() throws SQLException {
        if (app != null) {
            app.close();
            app = null;
        }
        if (db != null) {
            db.close();
            db = null;
        }
    }

    @Property(shrinking = ShrinkingMode.OFF) // tries: each stack's @PropertyDefaults
    void any_body_key_and_content_type_get_a_success_or_a_client_error_with_a_code_and_a_retry_answers_the_same(
            @ForAll("bodies") byte[] body, @ForAll("keys") String key, @ForAll("contentTypes") String contentType) {
        HttpResponse<String> first = post(body, key, contentType);
        Statistics.collect(first.statusCode(), code(first));
        assertAnswered(first);

        HttpResponse<String> retry = post(body, key, contentType);
        assertThat(retry.statusCode()).as("a retry of the same bytes").isEqualTo(first.statusCode());
        if (first.statusCode() < 300) {
            assertThat(retry.body()).isEqualTo(first.body());
            assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
            if (startsWith(body, PREFIX)) {
                byte[] changed = body.clone();
                changed[PREFIX.indexOf('1')] = '2'; // {"n":2,…: another value under the same key
                HttpResponse<String> conflict = post(changed, key, contentType);
                assertThat(conflict.statusCode()).as(conflict.body()).isEqualTo(422);
                assertThat(code(conflict)).isEqualTo("IDEMPOTENCY_KEY_CONFLICT");
            }
        } else {
            assertThat(code(retry)).isEqualTo(code(first));
            assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty(); // refused, so never stored
        }
    }

    /**
     * 2xx, or a 4xx problem+json with a code: never a 5xx, whatever the input. The exception is Spring MVC's 415 for
     * a media type that no route consumes, answered before any route (so any guard) is chosen.
     */
    private static void assertAnswered(HttpResponse<String> response) {
        int status = response.statusCode();
        assertThat(status).as(response.body()).isBetween(200, 499);
        if (status >= 400 && status != 415) {
            assertThat(response.headers().firstValue("Content-Type").orElse("")).as("%d %s", status, response.body())
                    .startsWith("application/problem+json");
            assertThat(code(response)).as(response.body()).isNotBlank();
        }
    }

    @Provide
    Arbitrary<byte[]> bodies() {
        return Arbitraries.longs().map(seed -> {
            Random random = new Random(seed);
            int shape = random.nextInt(100);
            if (shape < 10) {
                return raw(random);
            }
            String value = shape < 75 ? JsonDocuments.render(JsonDocuments.value(random, 3), random, true)
                    : shape < 83 ? nested(random)
                    : shape < 91 ? hugeArray(random)
                    : longString(random);
            return (PREFIX + value + "}").getBytes(StandardCharsets.UTF_8);
        });
    }

    /** Keys at their edges: the shortest, the longest, every visible ASCII character, quoted, and one too long. */
    @Provide
    Arbitrary<String> keys() {
        return Arbitraries.integers().between(0, 9).map(shape -> {
            String unique = Long.toString(KEYS.incrementAndGet(), 36);
            return switch (shape) {
                case 0 -> unique.length() == 1 ? unique : "k" + unique; // short (1 character for the first 35)
                case 1 -> pad(unique, 255);
                case 2 -> pad(unique, 256); // one too long: 400 IDEMPOTENCY_KEY_INVALID
                case 3 -> unique + "!#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
                case 4 -> "\"" + unique + "-\\\"q\\\\\""; // a quoted key with escapes
                default -> "fuzz-" + unique;
            };
        });
    }

    @Provide
    Arbitrary<String> contentTypes() {
        return Arbitraries.frequency(
                net.jqwik.api.Tuple.of(50, "application/json"),
                net.jqwik.api.Tuple.of(8, "application/json; charset=utf-8"),
                net.jqwik.api.Tuple.of(5, "APPLICATION/JSON"),
                net.jqwik.api.Tuple.of(6, "application/vnd.once.document+json"),
                net.jqwik.api.Tuple.of(8, "text/plain;charset=UTF-8"),
                net.jqwik.api.Tuple.of(5, "application/json;charset=ISO-8859-1"),
                net.jqwik.api.Tuple.of(4, "application/json; charset=\"utf-8\"; x=y"),
                net.jqwik.api.Tuple.of(4, "application/json;"),
                net.jqwik.api.Tuple.of(4, "application/xml"),
                net.jqwik.api.Tuple.of(3, "json"),
                net.jqwik.api.Tuple.of(3, ""));
    }

    private static String nested(Random random) {
        int depth = 400 + random.nextInt(300); // around Jackson's limit of 500
        StringBuilder open = new StringBuilder();
        StringBuilder close = new StringBuilder();
        for (int i = 0; i < depth; i++) {
            boolean array = random.nextBoolean();
            open.append(array ? "[" : "{\"a\":");
            close.insert(0, array ? "]" : "}");
        }
        return open + JsonDocuments.spell(JsonDocuments.number(random), random) + close;
    }

    private static String hugeArray(Random random) {
        int n = 1_000 + random.nextInt(60_000);
        StringBuilder out = new StringBuilder("[");
        for (int i = 0; i < n; i++) {
            out.append(i == 0 ? "" : ",").append(JsonDocuments.spell(JsonDocuments.number(random), random));
        }
        return out.append(']').toString();
    }

    private static String longString(Random random) {
        int n = 10_000 + random.nextInt(1_200_000); // around the 1 MiB body limit
        StringBuilder out = new StringBuilder(n + 2).append('"');
        for (int i = 0; i < n; i++) {
            out.append((char) ('a' + random.nextInt(26)));
        }
        return out.append(JsonDocuments.string(random).replace("\\", "\\\\").replace("\"", "\\\"")).append('"')
                .toString();
    }

    /** Bytes that are not one UTF-8 JSON text: random bytes, a BOM, UTF-16, a truncated document. */
    private static byte[] raw(Random random) {
        String document = PREFIX + JsonDocuments.render(JsonDocuments.value(random, 2), random, false) + "}";
        return switch (random.nextInt(4)) {
            case 0 -> {
                byte[] bytes = new byte[random.nextInt(64)];
                random.nextBytes(bytes);
                yield bytes;
            }
            case 1 -> ("\uFEFF" + document).getBytes(StandardCharsets.UTF_8);
            case 2 -> document.getBytes(StandardCharsets.UTF_16LE);
            default -> document.substring(0, random.nextInt(document.length())).getBytes(StandardCharsets.UTF_8);
        };
    }

    private static String pad(String unique, int length) {
        return "k".repeat(Math.max(0, length - unique.length())) + unique;
    }

    private static boolean startsWith(byte[] body, String prefix) {
        byte[] p = prefix.getBytes(StandardCharsets.US_ASCII);
        if (body.length < p.length) {
            return false;
        }
        for (int i = 0; i < p.length; i++) {
            if (body[i] != p[i]) {
                return false;
            }
        }
        return true;
    }

    private static String code(HttpResponse<String> response) {
        if (!response.headers().firstValue("Content-Type").orElse("").startsWith("application/problem+json")) {
            return "-";
        }
        JsonNode problem = JSON.readTree(response.body());
        return problem.path("code").asString("");
    }

    private static HttpResponse<String> post(byte[] body, String key, String contentType) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + "/documents"))
                .timeout(Duration.ofSeconds(60))
                .header("Authorization", "Basic " + Base64.getEncoder()
                        .encodeToString("alice:alice-pass".getBytes(StandardCharsets.UTF_8)))
                .header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (!contentType.isEmpty()) {
            request.header("Content-Type", contentType);
        }
        try {
            return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
