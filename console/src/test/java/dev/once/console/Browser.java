package dev.once.console;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Headless Chromium through Selenium, from Debian's {@code chromium} and {@code chromium-driver} (or
 * {@code ONCE_TEST_CHROME} and {@code ONCE_TEST_CHROMEDRIVER}); nothing is downloaded. Without them the browser tests
 * are skipped, unless {@code ONCE_TEST_REQUIRE_BROWSER=true} (CI), where that is a failure.
 */
final class Browser implements AutoCloseable {

    static final Duration WAIT = Duration.ofSeconds(30);

    final WebDriver driver;
    final String base;

    private Browser(WebDriver driver, String base) {
        this.driver = driver;
        this.base = base;
    }

    static Browser open(String base) {
        Path chrome = Path.of(env("ONCE_TEST_CHROME", "/usr/bin/chromium"));
        Path chromedriver = Path.of(env("ONCE_TEST_CHROMEDRIVER", "/usr/bin/chromedriver"));
        boolean present = Files.isExecutable(chrome) && Files.isExecutable(chromedriver);
        if (!present && Boolean.parseBoolean(System.getenv("ONCE_TEST_REQUIRE_BROWSER"))) {
            throw new IllegalStateException("no " + chrome + " or " + chromedriver + ": install Debian's chromium "
                    + "and chromium-driver (bash .ci/run does)");
        }
        Assumptions.assumeTrue(present, "install chromium and chromium-driver to run the console's browser tests");
        ChromeOptions options = new ChromeOptions();
        options.setBinary(chrome.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,1600", "--disable-extensions", "--no-first-run");
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(chromedriver.toFile())
                .usingAnyFreePort().build();
        ChromeDriver driver = new ChromeDriver(service, options);
        driver.manage().timeouts().scriptTimeout(WAIT);
        return new Browser(driver, base);
    }

    /** Signs in with the console's form, typing as a user would, and waits for the console to have loaded. */
    void signIn(String user, String password) {
        driver.get(base + "/login");
        WebElement name = driver.findElement(By.id("username"));
        name.sendKeys(user);
        driver.findElement(By.id("password")).sendKeys(password + org.openqa.selenium.Keys.ENTER);
        loaded();
    }

    /** Waits until the console has filled every section from its API. */
    void loaded() {
        until(d -> "true".equals(d.findElement(By.tagName("body")).getAttribute("data-loaded")));
    }

    void until(java.util.function.Function<WebDriver, Boolean> condition) {
        new WebDriverWait(driver, WAIT).withMessage(() -> "the page said: "
                + driver.findElements(By.id("status")).stream().map(WebElement::getText).findFirst().orElse("-"))
                .until(condition::apply);
    }

    /** Runs {@code fetch} in the page and returns the response's status: a request made from the signed-in page. */
    long post(String path, String jsonBody, boolean withCsrfToken) {
        Object status = ((JavascriptExecutor) driver).executeAsyncScript("""
                var done = arguments[arguments.length - 1];
                var headers = {'Content-Type': 'application/json'};
                if (arguments[2]) {
                  var c = document.cookie.split('; ').find(function (x) { return x.indexOf('XSRF-TOKEN=') === 0; });
                  headers['X-XSRF-TOKEN'] = c ? decodeURIComponent(c.substring(11)) : '';
                }
                fetch(arguments[0], {method: 'POST', credentials: 'same-origin', headers: headers, body: arguments[1]})
                  .then(function (r) { done(r.status); }, function () { done(-1); });
                """, base + path, jsonBody, withCsrfToken);
        return (Long) status;
    }

    WebElement active() {
        return driver.switchTo().activeElement();
    }

    @Override
    public void close() {
        driver.quit();
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }
}
