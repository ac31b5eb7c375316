package dev.once.guard;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

/** A real HTTP client for the contract tests: Basic auth as a demo user, an optional Idempotency-Key, a JSON body. */
final class Http {

    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;

    Http(int port) {
        this.base = "http://127.0.0.1:" + port;
    }

    HttpResponse<String> post(String path, String user, String key, String json, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json));
        if (user != null) {
            request.header("Authorization", basic(user));
        }
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        if (headers.length > 0) {
            request.headers(headers);
        }
        return send(request.build());
    }

    /** A POST of {@code body} as {@code contentType}, as alice would send it with {@code key}. */
    HttpResponse<String> post(String path, String user, String key, String contentType, byte[] body) {
        return send(HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60))
                .header("Authorization", basic(user)).header("Idempotency-Key", key).header("Content-Type", contentType)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build());
    }

    HttpResponse<String> get(String path, String user, String key) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60))
                .header("Authorization", basic(user)).GET();
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        return send(request.build());
    }

    private HttpResponse<String> send(HttpRequest request) {
        try {
            return client.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static String basic(String user) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + user + "-pass").getBytes(StandardCharsets.UTF_8));
    }
}
