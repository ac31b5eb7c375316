package dev.once.example.demo;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Real HTTP to the service as one demo user: Basic authentication, an {@code Idempotency-Key}, a JSON body. Requests
 * go round-robin over the targets, so with two instances a client's retries land on either. Counts what it sees.
 */
final class DemoClient {

    /** One answer, or none when the client gave up waiting ({@code status == 0}). */
    record Answer(int status, String body, boolean replayed, Optional<String> retryAfter) {
        boolean timedOut() {
            return status == 0;
        }
    }

    private final HttpClient http;
    private final List<URI> targets;
    private final DemoStats stats;
    private final AtomicLong next = new AtomicLong();

    DemoClient(HttpClient http, List<URI> targets, DemoStats stats) {
        this.http = http;
        this.targets = targets;
        this.stats = stats;
    }

    Answer post(String user, String path, String key, String json, Duration timeout) {
        HttpRequest.Builder request = HttpRequest.newBuilder(target(path)).timeout(timeout)
                .header("Authorization", basic(user))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json));
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        return send(request.build());
    }

    Answer get(String user, String path) {
        return send(HttpRequest.newBuilder(target(path)).timeout(Duration.ofSeconds(30))
                .header("Authorization", basic(user)).GET().build());
    }

    private Answer send(HttpRequest request) {
        stats.requests.increment();
        try {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            boolean replayed = response.headers().firstValue("Idempotent-Replayed").map("true"::equals).orElse(false);
            if (replayed) {
                stats.replayed.increment();
            }
            if (response.statusCode() == 409) {
                stats.inProgress409.increment();
            }
            return new Answer(response.statusCode(), response.body(), replayed,
                    response.headers().firstValue("Retry-After"));
        } catch (HttpTimeoutException e) {
            stats.timeouts.increment();
            return new Answer(0, "", false, Optional.empty());
        } catch (IOException e) {
            stats.ioErrors.increment();
            return new Answer(0, "", false, Optional.empty());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted", e);
        }
    }

    private URI target(String path) {
        URI base = targets.get((int) (next.getAndIncrement() % targets.size()));
        return base.resolve(path);
    }

    private static String basic(String user) {
        String credentials = user + ":" + user + "-pass";
        return "Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8));
    }
}
