package dev.once.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.once.console.testapp.ConsoleTestApplication;
import dev.once.test.TestDatabase;
import dev.once.test.TestKafka;
import dev.once.wire.RecordSigning;
import dev.once.wire.WireFormat;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.stream.IntStream;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebElement;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The console in headless Chromium, served by a service on a real PostgreSQL and Kafka: what a viewer and an operator
 * see and may do, CSRF, the audit of an action, the charts, and the main flow by keyboard alone.
 */
@SpringBootTest(classes = ConsoleTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ConsoleBrowserIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(8);

    static final String TOPIC = "console" + UUID.randomUUID().toString().substring(0, 8) + ".order";

    @DynamicPropertySource
    static void infrastructure(DynamicPropertyRegistry registry) {
        TestKafka.createTopic(TOPIC, 2);
        TestKafka.createTopic(WireFormat.deadLetterTopic(TOPIC), 1);
        new JdbcTemplate(db.dataSource()).execute("CREATE TABLE IF NOT EXISTS mailed (event_id text PRIMARY KEY)");
        db.springProperties().forEach((name, value) -> registry.add(name, () -> value));
        registry.add("spring.kafka.bootstrap-servers", TestKafka::bootstrapServers);
        registry.add("once.dispatcher.topics", () -> TOPIC);
        registry.add("once.dispatcher.group-id", () -> "console-test");
        // a short retry window, so that failures reach "failed" and wait for an operator within the test
        registry.add("once.dispatcher.parking.initial-interval", () -> "100ms");
        registry.add("once.dispatcher.parking.max-interval", () -> "200ms");
        registry.add("once.dispatcher.parking.window", () -> "1s");
        registry.add("once.console.sample-interval", () -> "1s");
        registry.add("management.endpoints.web.exposure.include", () -> "health,once");
        registry.add("once.outbox.signing.keys.console-test", () -> "the console test's key, thirty-two bytes or more");
    }

    @LocalServerPort
    int port;

    @Autowired
    RecordSigning signing;

    final JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
    final List<Browser> browsers = new ArrayList<>();

    @AfterEach
    void closeBrowsers() {
        browsers.forEach(Browser::close);
        ConsoleTestApplication.MAIL_DOWN.set(false);
    }

    @Test
    void a_viewer_sees_the_failures_has_no_action_buttons_and_a_forged_action_is_refused() {
        send("InvoiceSent", "inv", 3);
        await().atMost(Duration.ofSeconds(60)).until(() -> failed("invoicer") == 3);

        Browser browser = browser();
        browser.signIn("viewer", "viewer-pass");

        assertThat(text("who")).isEqualTo("viewer (viewer)");
        assertThat(rowOf(browser, "failure-groups", "invoicer").getText())
                .contains("java.lang.IllegalArgumentException").contains("no invoice template for");
        assertThat(browser.driver.findElements(By.xpath("//button[normalize-space()='Retry group' or "
                + "normalize-space()='Abandon group' or normalize-space()='Retry all filtered' or "
                + "normalize-space()='Redrive' or normalize-space()='Release']"))).as("no action for a viewer").isEmpty();
        assertThat(browser.driver.findElements(By.xpath("//button[normalize-space()='Show events']"))).isNotEmpty();
        assertThat(rowOf(browser, "claim-partitions", "undated").getText()).contains("once_handler_claim_undated");
        assertThat(rowOf(browser, "handlers", "invoicer").getText()).contains("InvoiceSent:v1:invoicer");

        long audited = audited();
        assertThat(browser.post("/api/parked/retry", "{\"handler_key\":\"invoicer\",\"reason\":\"forged\"}", true))
                .as("a viewer's action, with a valid CSRF token").isEqualTo(403);
        assertThat(failed("invoicer")).isEqualTo(3);
        assertThat(audited()).isEqualTo(audited);
    }

    @Test
    void an_action_without_the_csrf_token_is_refused_and_with_it_is_taken_and_audited() {
        Browser browser = browser();
        browser.signIn("ops", "ops-pass");
        long audited = audited();

        assertThat(browser.post("/api/parked/retry", "{\"handler_key\":\"nobody\",\"reason\":\"csrf\"}", false))
                .isEqualTo(403);
        assertThat(api("ops", "ops-pass", "POST", "/once/api/parked/retry",
                "{\"handler_key\":\"nobody\",\"reason\":\"csrf\"}").statusCode())
                .as("HTTP Basic, no token: refused before authentication").isIn(401, 403);
        assertThat(audited()).isEqualTo(audited);

        assertThat(browser.post("/api/parked/retry", "{\"handler_key\":\"nobody\",\"reason\":\"csrf\"}", true))
                .isEqualTo(200);
        assertThat(audited()).isEqualTo(audited + 1);
        assertThat(browser.post("/api/parked/retry", "{\"handler_key\":\"nobody\"}", true))
                .as("no reason: problem REASON_REQUIRED").isEqualTo(400);
    }

    @Test
    void an_operator_retries_a_failure_group_of_50_by_keyboard_and_one_audit_row_names_it() {
        ConsoleTestApplication.MAIL_DOWN.set(true);
        send("OrderPlaced", "order", 50);
        await().atMost(Duration.ofSeconds(90)).until(() -> failed("mailer") == 50);
        String fingerprint = jdbc.queryForObject("SELECT DISTINCT fingerprint FROM once_parked_event "
                + "WHERE 'mailer' = ANY (handler_keys)", String.class);
        ConsoleTestApplication.MAIL_DOWN.set(false);

        Browser browser = browser();
        browser.signIn("ops", "ops-pass");
        assertThat(text("who")).isEqualTo("ops (operator)");
        WebElement group = rowOf(browser, "failure-groups", "mailer");
        assertThat(group.getText()).contains("mail service unavailable (503)").contains("acme, globex");

        // keyboard only: the skip link first, then Tab to the group's Retry button
        browser.driver.findElement(By.tagName("body")).sendKeys(Keys.TAB);
        assertThat(browser.active().getText()).isEqualTo("Skip to content");
        browser.active().sendKeys(Keys.ENTER);
        assertThat(browser.active().getAttribute("id")).isEqualTo("main");
        WebElement retry = group.findElement(By.xpath(".//button[normalize-space()='Retry group']"));
        for (int i = 0; i < 300 && !retry.equals(browser.active()); i++) {
            browser.active().sendKeys(Keys.TAB);
        }
        assertThat(browser.active()).as("Retry group is reachable by Tab").isEqualTo(retry);
        browser.active().sendKeys(Keys.ENTER);
        browser.until(d -> d.findElement(By.id("confirm")).getAttribute("open") != null
                && !d.findElement(By.id("confirm-count")).getText().isEmpty());
        assertThat(text("confirm-count")).as("the dry run's count first").isEqualTo("50 event(s) would be retried.");
        screenshot(browser); // the README's picture, when ONCE_CONSOLE_SCREENSHOT names a file
        assertThat(browser.active().getAttribute("id")).isEqualTo("confirm-reason");
        browser.active().sendKeys("mail service is back (INC-42)");
        browser.active().sendKeys(Keys.TAB);
        assertThat(browser.active().getText()).isEqualTo("Confirm");
        browser.active().sendKeys(Keys.ENTER);
        browser.until(d -> "Retried 50 event(s).".equals(d.findElement(By.id("status")).getText()));

        await().atMost(Duration.ofSeconds(60)).until(() -> mailed() == 50 && parked("mailer") == 0);
        browser.driver.navigate().refresh();
        browser.loaded();
        assertThat(browser.driver.findElement(By.id("failure-groups")).getText()).doesNotContain("mailer");
        assertThat(rowOf(browser, "audit-log", "mail service is back (INC-42)").getText())
                .contains("ops").contains("parked.retry").contains("50");

        List<Map<String, Object>> rows = jdbc.queryForList("SELECT operator, via, target ->> 'handler_key' AS handler, "
                + "target ->> 'failure' AS failure, affected, reason FROM once_operator_audit WHERE action = 'parked.retry' "
                + "AND target ->> 'handler_key' = 'mailer'");
        assertThat(rows).singleElement().isEqualTo(Map.of("operator", "ops", "via", "console", "handler", "mailer",
                "failure", fingerprint, "affected", 50L, "reason", "mail service is back (INC-42)"));
    }

    @Test
    void the_charts_draw_the_application_s_own_meters() {
        send("OrderPlaced", "chart", 5);
        await().atMost(Duration.ofSeconds(60)).until(() -> mailed() >= 5);

        Browser browser = browser();
        browser.signIn("viewer", "viewer-pass");
        browser.until(d -> d.findElements(By.cssSelector(".chart canvas")).size() == 3);
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            Object handled = ((JavascriptExecutor) browser.driver).executeAsyncScript("""
                    var done = arguments[arguments.length - 1];
                    fetch(arguments[0], {credentials: 'same-origin'}).then(function (r) { return r.json(); })
                      .then(function (s) { done(s.handled_per_second.filter(function (v) { return v > 0; }).length); });
                    """, browser.base + "/api/series");
            return ((Long) handled) > 0;
        });
        assertThat(browser.driver.findElement(By.id("chart-flow")).getText()).contains("handled/s");
        assertThat(browser.driver.findElement(By.id("overview-figures")).getText())
                .contains("Handler lag (records)").contains("Dead-lettered per second");
    }

    @Test
    void the_overview_is_an_actuator_endpoint_too() {
        HttpResponse<String> response = api("alice", "alice-pass", "GET", "/actuator/once", null);
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).contains("\"outbox\"").contains("\"consumer_groups\"").contains("\"http_records\"");
        assertThat(api("alice", "alice-pass", "GET", "/once/api/overview", null).statusCode())
                .as("a user with neither authority").isEqualTo(403);
    }

    private static void screenshot(Browser browser) {
        String file = System.getenv("ONCE_CONSOLE_SCREENSHOT");
        if (file != null && !file.isBlank()) {
            byte[] png = ((org.openqa.selenium.TakesScreenshot) browser.driver)
                    .getScreenshotAs(org.openqa.selenium.OutputType.BYTES);
            try {
                java.nio.file.Files.write(java.nio.file.Path.of(file), png);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }

    private Browser browser() {
        Browser browser = Browser.open("http://localhost:" + port + "/once");
        browsers.add(browser);
        return browser;
    }

    private String text(String id) {
        return browsers.get(browsers.size() - 1).driver.findElement(By.id(id)).getText();
    }

    /** The first body row of table {@code id} that mentions {@code text}, once the table shows one. */
    private static WebElement rowOf(Browser browser, String id, String text) {
        By row = By.xpath("//table[@id='" + id + "']/tbody/tr[td[contains(normalize-space(), '" + text + "')]]");
        browser.until(d -> !d.findElements(row).isEmpty());
        return browser.driver.findElement(row);
    }

    private void send(String type, String keyPrefix, int n) {
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers());
        try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(config, new StringSerializer(),
                new ByteArraySerializer())) {
            TestKafka.sendAll(producer, IntStream.range(0, n).mapToObj(i -> {
                ProducerRecord<String, byte[]> record = new ProducerRecord<>(TOPIC, keyPrefix + "-" + i,
                        ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8));
                Map.of(WireFormat.EVENT_ID, UUID.randomUUID().toString(), WireFormat.TENANT_ID,
                                i % 2 == 0 ? "acme" : "globex", WireFormat.ACTOR_ID, "alice",
                                WireFormat.AGGREGATE_TYPE, "order", WireFormat.EVENT_TYPE, type,
                                WireFormat.EVENT_VERSION, "1")
                        .forEach((name, value) -> record.headers().add(name, value.getBytes(StandardCharsets.UTF_8)));
                signing.sign(record);
                return record;
            }).toList());
        }
    }

    private HttpResponse<String> api(String user, String password, String method, String path, String body) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .header("Authorization", "Basic " + Base64.getEncoder().encodeToString((user + ":" + password)
                        .getBytes(StandardCharsets.UTF_8)))
                .header("Content-Type", "application/json").header("Accept", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body));
        try {
            return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private long failed(String handler) {
        return jdbc.queryForObject("SELECT count(*) FROM once_parked_event WHERE status = 'failed' "
                + "AND ? = ANY (handler_keys)", Long.class, handler);
    }

    private long parked(String handler) {
        return jdbc.queryForObject("SELECT count(*) FROM once_parked_event WHERE status <> 'abandoned' "
                + "AND ? = ANY (handler_keys)", Long.class, handler);
    }

    private long mailed() {
        return jdbc.queryForObject("SELECT count(*) FROM mailed", Long.class);
    }

    private long audited() {
        return jdbc.queryForObject("SELECT count(*) FROM once_operator_audit", Long.class);
    }
}
