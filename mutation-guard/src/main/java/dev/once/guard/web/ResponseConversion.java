package dev.once.guard.web;

import dev.once.OnceException;
import dev.once.guard.GuardResult;
import dev.once.idempotency.StoredResponse;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpOutputMessage;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageConverter;

/**
 * Between Spring MVC and the store: serialises a handler's {@link ResponseEntity} with the application's own message
 * converters into a {@link StoredResponse}; writes a completed {@link GuardResult} to the servlet response, or turns
 * it into a {@link ResponseEntity} when the method was called as code; and builds the guard's problem responses. The
 * first response and every replay are the same bytes.
 */
final class ResponseConversion {

    static final String REPLAYED_HEADER = "Idempotent-Replayed";
    static final String BODY_OMITTED_HEADER = "Idempotent-Response-Body-Omitted";

    private final List<HttpMessageConverter<?>> converters;
    private final Set<String> replayedHeaders;

    ResponseConversion(List<HttpMessageConverter<?>> converters, Set<String> replayedHeaders) {
        this.converters = converters;
        this.replayedHeaders = replayedHeaders;
    }

    StoredResponse toStored(ResponseEntity<?> entity) {
        Object body = entity.getBody();
        HttpHeaders headers = entity.getHeaders();
        MediaType contentType = headers.getContentType();
        byte[] bytes = new byte[0];
        if (body instanceof byte[] raw) {
            bytes = raw;
            contentType = contentType != null ? contentType : MediaType.APPLICATION_OCTET_STREAM;
        } else if (body != null) {
            contentType = contentType != null ? contentType : defaultContentType(body);
            bytes = write(body, contentType);
        }
        Map<String, String> replayed = new LinkedHashMap<>();
        for (String name : replayedHeaders) {
            String value = headers.getFirst(name);
            if (value != null) {
                replayed.put(name, value);
            }
        }
        return new StoredResponse(entity.getStatusCode().value(), contentType == null ? null : contentType.toString(),
                replayed, bytes, false);
    }

    ResponseEntity<?> toEntity(GuardResult result) {
        if (result instanceof GuardResult.Completed completed) {
            StoredResponse response = completed.response();
            ResponseEntity.BodyBuilder builder = ResponseEntity.status(response.statusCode());
            headers(completed).forEach(builder::header);
            return hasBody(response.statusCode()) ? builder.body(response.body()) : builder.build();
        }
        if (result instanceof GuardResult.InProgress inProgress) {
            return problem(HttpStatus.CONFLICT, "IDEMPOTENCY_IN_PROGRESS",
                    "A request with this Idempotency-Key is still being processed; retry later")
                    .header(HttpHeaders.RETRY_AFTER, Long.toString(retryAfterSeconds(inProgress.retryAfter())))
                    .build();
        }
        return problem(HttpStatus.UNPROCESSABLE_CONTENT, "IDEMPOTENCY_KEY_CONFLICT",
                "This Idempotency-Key was already used with a different request").build();
    }

    /**
     * Writes a completed result straight to the servlet response: the stored status, headers and bytes, without
     * Spring MVC's message converters and content negotiation (the bytes were produced by them the first time, and
     * are replayed as they are). That return-value handling was 13 % of a replay's JVM samples.
     */
    void write(GuardResult.Completed completed, HttpServletResponse servlet) {
        StoredResponse response = completed.response();
        servlet.setStatus(response.statusCode());
        headers(completed).forEach(servlet::setHeader);
        try {
            if (hasBody(response.statusCode())) {
                servlet.setContentLength(response.bodyLength());
                response.writeBodyTo(servlet.getOutputStream());
            }
            servlet.flushBuffer(); // committed here, as Spring MVC's converters commit: later code cannot alter it
        } catch (IOException e) {
            throw new UncheckedIOException(e); // the client went away; the controller method declares no IOException
        }
    }

    /** 1xx, 204 and 304 responses have neither a body nor a Content-Length (RFC 9110, 6.4.1 and 8.6). */
    static boolean hasBody(int status) {
        return status >= 200 && status != 204 && status != 304;
    }

    /** The headers a completed result is answered with: the stored ones, Content-Type, and the replay marker. */
    static Map<String, String> headers(GuardResult.Completed completed) {
        StoredResponse response = completed.response();
        Map<String, String> headers = new LinkedHashMap<>(response.headers());
        if (response.bodyOmitted()) {
            headers.put(BODY_OMITTED_HEADER, "true"); // and no Content-Type: there is no body to parse
        } else if (response.contentType() != null) {
            headers.put(HttpHeaders.CONTENT_TYPE, response.contentType());
        }
        if (completed.replayed()) {
            headers.put(REPLAYED_HEADER, "true");
        }
        return headers;
    }

    /** A problem+json response with a stable {@code code}, built on Spring's {@link ProblemDetail}. */
    static ProblemResponse problem(HttpStatus status, String code, String detail) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
        problem.setProperty("code", code);
        return new ProblemResponse(ResponseEntity.status(status).contentType(MediaType.APPLICATION_PROBLEM_JSON), problem);
    }

    /** A problem response under construction: add headers, then {@link #build()}. */
    record ProblemResponse(ResponseEntity.BodyBuilder builder, ProblemDetail problem) {

        ProblemResponse header(String name, String value) {
            builder.header(name, value);
            return this;
        }

        ResponseEntity<ProblemDetail> build() {
            return builder.body(problem);
        }
    }

    static long retryAfterSeconds(Duration retryAfter) {
        return Math.max(1, (retryAfter.toMillis() + 999) / 1000);
    }

    static MediaType defaultContentType(Object body) {
        if (body instanceof CharSequence) {
            return new MediaType(MediaType.TEXT_PLAIN, StandardCharsets.UTF_8);
        }
        return body instanceof ProblemDetail ? MediaType.APPLICATION_PROBLEM_JSON : MediaType.APPLICATION_JSON;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    byte[] write(Object body, MediaType contentType) {
        for (HttpMessageConverter converter : converters) {
            if (converter.canWrite(body.getClass(), contentType)) {
                Buffer buffer = new Buffer();
                try {
                    converter.write(body, contentType, buffer);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                return buffer.bytes.toByteArray();
            }
        }
        throw new OnceException("No HttpMessageConverter writes " + body.getClass().getName() + " as " + contentType
                + "; an @Idempotent response must be serialisable to be stored");
    }

    private static final class Buffer implements HttpOutputMessage {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final HttpHeaders headers = new HttpHeaders();

        @Override
        public OutputStream getBody() {
            return bytes;
        }

        @Override
        public HttpHeaders getHeaders() {
            return headers;
        }
    }
}
