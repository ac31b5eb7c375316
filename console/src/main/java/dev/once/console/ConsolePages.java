package dev.once.console;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.security.web.csrf.CsrfToken;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.util.HtmlUtils;

/**
 * The console's two pages, rendered on the server from templates in the jar: the console itself (a few static files
 * and uPlot from its webjar fill it from the JSON API) and its login form. No build step, no CDN.
 */
@Controller
@RequestMapping("${once.console.path:" + Console.PATH + "}")
final class ConsolePages {

    /** The uPlot version of the webjar, as the build wrote it. */
    static final String UPLOT_VERSION = properties().getProperty("uplot.version");

    private final String path;
    private final String index = template("index.html");
    private final String login = template("login.html");

    public ConsolePages(String path) {
        this.path = path;
    }

    @GetMapping
    public ResponseEntity<Void> root() {
        return ResponseEntity.status(302).header("Location", path + "/").build();
    }

    @GetMapping(value = "/", produces = MediaType.TEXT_HTML_VALUE)
    public ResponseEntity<String> index() {
        return html(index);
    }

    @GetMapping(value = "/login", produces = MediaType.TEXT_HTML_VALUE)
    public ResponseEntity<String> login(CsrfToken csrf) {
        return html(login.replace("{{csrf-parameter}}", HtmlUtils.htmlEscape(csrf.getParameterName()))
                .replace("{{csrf}}", HtmlUtils.htmlEscape(csrf.getToken())));
    }

    private ResponseEntity<String> html(String page) {
        return ResponseEntity.ok().cacheControl(CacheControl.noStore()).contentType(MediaType.TEXT_HTML)
                .body(page.replace("{{path}}", HtmlUtils.htmlEscape(path))
                        .replace("{{uplot}}", HtmlUtils.htmlEscape(UPLOT_VERSION)));
    }

    private static String template(String name) {
        try (InputStream in = ConsolePages.class.getResourceAsStream("pages/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Properties properties() {
        Properties p = new Properties();
        try (InputStream in = ConsolePages.class.getResourceAsStream("console.properties")) {
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return p;
    }
}
