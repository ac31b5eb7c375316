package dev.once.example;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

/** Real HTTP to one service instance as a demo user (or anonymously when the user is null). */
final class Http {

    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    final URI base;

    Http(URI base) {
        this.base = base;
    }

    HttpResponse<String> post(String user, String path, String key, String json) {
        HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json));
        if (user != null) {
            request.header("Authorization", basic(user));
        }
        if (key != null) {
            request.header("Idempotency-Key", key);
        }
        return send(request.build());
    }

    HttpResponse<String> get(String user, String path) {
        HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(60)).GET();
        if (user != null) {
            request.header("Authorization", basic(user));
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
