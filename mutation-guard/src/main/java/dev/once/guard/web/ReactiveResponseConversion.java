package dev.once.guard.web;

import dev.once.OnceException;
import dev.once.guard.GuardResult;
import dev.once.guard.Problems;
import dev.once.idempotency.StoredResponse;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.reactivestreams.Publisher;
import org.springframework.core.ResolvableType;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.http.server.reactive.AbstractServerHttpResponse;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.reactive.result.view.ViewResolver;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Between WebFlux and the store: renders a handler's {@link ResponseEntity} or {@link ServerResponse} with the
 * application's own codecs into a {@link StoredResponse}, and answers a {@link GuardResult} with the stored bytes as
 * they are (no second encoding), so that the first response and every replay are the same bytes. The answers are
 * those of {@link ResponseConversion} on Spring MVC.
 */
final class ReactiveResponseConversion {

    private final List<HttpMessageWriter<?>> writers;
    private final Set<String> replayedHeaders;
    private final ServerResponse.Context context;

    ReactiveResponseConversion(List<HttpMessageWriter<?>> writers, Set<String> replayedHeaders) {
        this.writers = writers;
        this.replayedHeaders = replayedHeaders;
        this.context = new ServerResponse.Context() {
            @Override
            public List<HttpMessageWriter<?>> messageWriters() {
                return writers;
            }

            @Override
            public List<ViewResolver> viewResolvers() {
                return List.of();
            }
        };
    }

    /** {@code entity} serialised as the application's codecs write it. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    Mono<StoredResponse> toStored(ResponseEntity<?> entity) {
        Object body = entity.getBody();
        HttpHeaders headers = entity.getHeaders();
        MediaType contentType = headers.getContentType();
        if (body == null || body instanceof byte[]) {
            byte[] bytes = body == null ? new byte[0] : (byte[]) body;
            MediaType type = body == null ? contentType
                    : contentType != null ? contentType : MediaType.APPLICATION_OCTET_STREAM;
            return Mono.just(stored(entity.getStatusCode().value(), type, headers, bytes));
        }
        MediaType type = contentType != null ? contentType : ResponseConversion.defaultContentType(body);
        ResolvableType bodyType = ResolvableType.forInstance(body);
        for (HttpMessageWriter writer : writers) {
            if (writer.canWrite(bodyType, type)) {
                Captured captured = new Captured();
                return writer.write(Mono.just(body), bodyType, type, captured, Map.of())
                        .then(Mono.fromSupplier(() -> stored(entity.getStatusCode().value(),
                                captured.getHeaders().getContentType() != null
                                        ? captured.getHeaders().getContentType() : type, headers, captured.bytes())));
            }
        }
        return Mono.error(new OnceException("No HttpMessageWriter writes " + body.getClass().getName() + " as " + type
                + "; an @Idempotent response must be serialisable to be stored"));
    }

    /** {@code response}, as it would be written to {@code exchange}. */
    Mono<StoredResponse> toStored(ServerResponse response, ServerWebExchange exchange) {
        Captured captured = new Captured();
        return response.writeTo(exchange.mutate().response(captured).build(), context)
                .then(Mono.fromSupplier(() -> stored(response.statusCode().value(),
                        captured.getHeaders().getContentType(), response.headers(), captured.bytes())));
    }

    private StoredResponse stored(int status, MediaType contentType, HttpHeaders headers, byte[] bytes) {
        Map<String, String> replayed = new LinkedHashMap<>();
        for (String name : replayedHeaders) {
            String value = headers.getFirst(name);
            if (value != null) {
                replayed.put(name, value);
            }
        }
        return new StoredResponse(status, contentType == null ? null : contentType.toString(), replayed, bytes, false);
    }

    /** The answer to {@code result}, its body the stored bytes, for an annotated method. */
    ResponseEntity<byte[]> toEntity(GuardResult result) {
        Answer answer = answer(result);
        ResponseEntity.BodyBuilder builder = ResponseEntity.status(answer.response().statusCode());
        answer.headers().forEach(builder::header);
        return ResponseConversion.hasBody(answer.response().statusCode()) ? builder.body(answer.response().body()) : builder.build();
    }

    /** The same for a functional route. */
    Mono<ServerResponse> toServerResponse(GuardResult result) {
        Answer answer = answer(result);
        ServerResponse.BodyBuilder builder = ServerResponse.status(answer.response().statusCode());
        answer.headers().forEach(builder::header);
        return ResponseConversion.hasBody(answer.response().statusCode()) ? builder.bodyValue(answer.response().body()) : builder.build();
    }

    private record Answer(StoredResponse response, Map<String, String> headers) {
    }

    /** The stored response with its headers, or the guard's problem for a key in progress or in conflict. */
    private static Answer answer(GuardResult result) {
        if (result instanceof GuardResult.Completed completed) {
            return new Answer(completed.response(), ResponseConversion.headers(completed));
        }
        if (result instanceof GuardResult.InProgress inProgress) {
            return new Answer(Problems.response(409, "Conflict",
                    "A request with this Idempotency-Key is still being processed; retry later", "IDEMPOTENCY_IN_PROGRESS"),
                    Map.of(HttpHeaders.CONTENT_TYPE, Problems.CONTENT_TYPE,
                            HttpHeaders.RETRY_AFTER, Long.toString(ResponseConversion.retryAfterSeconds(inProgress.retryAfter()))));
        }
        return new Answer(Problems.response(422, "Unprocessable Content",
                "This Idempotency-Key was already used with a different request", "IDEMPOTENCY_KEY_CONFLICT"),
                Map.of(HttpHeaders.CONTENT_TYPE, Problems.CONTENT_TYPE));
    }

    /** A problem the guard answers before it runs (no key, no principal): never stored, never replayed. */
    static GuardResult problem(int status, String title, String code, String detail) {
        return new GuardResult.Completed(Problems.response(status, title, detail, code), null, null, false);
    }

    /** A response that keeps what is written to it. */
    private static final class Captured extends AbstractServerHttpResponse {

        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        Captured() {
            super(DefaultDataBufferFactory.sharedInstance);
        }

        byte[] bytes() {
            return bytes.toByteArray();
        }

        @Override
        public <T> T getNativeResponse() {
            throw new IllegalStateException("A captured response has no native response");
        }

        @Override
        protected Mono<Void> writeWithInternal(Publisher<? extends DataBuffer> body) {
            return Flux.from(body).doOnNext(this::copy).then();
        }

        @Override
        protected Mono<Void> writeAndFlushWithInternal(Publisher<? extends Publisher<? extends DataBuffer>> body) {
            return Flux.from(body).concatMap(part -> Flux.from(part).doOnNext(this::copy)).then();
        }

        private synchronized void copy(DataBuffer buffer) {
            try (DataBuffer.ByteBufferIterator views = buffer.readableByteBuffers()) {
                while (views.hasNext()) {
                    ByteBuffer view = views.next();
                    byte[] chunk = new byte[view.remaining()];
                    view.get(chunk);
                    bytes.write(chunk, 0, chunk.length);
                }
            } finally {
                DataBufferUtils.release(buffer);
            }
        }

        @Override
        protected void applyStatusCode() {
        }

        @Override
        protected void applyHeaders() {
        }

        @Override
        protected void applyCookies() {
        }
    }
}
