package dev.once.guard.web;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntSupplier;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * What WebFlux hands to no method interceptor, kept for {@link Idempotent} methods: the request's exchange, in the
 * Reactor context of its handling, and, for an unsafe request that carries an {@code Idempotency-Key}, a copy of the
 * body's bytes as the application's codecs read them (the key's fingerprint needs the bytes, which are gone once
 * decoded). Requests without a key pass untouched but for the context entry. Runs after the security filters, so the
 * exchange it keeps has the authenticated principal.
 */
final class ExchangeCapture implements WebFilter, Ordered {

    static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS", "TRACE");
    private static final Object CONTEXT_KEY = ExchangeCapture.class.getName() + ".exchange";
    private static final String BODY = ExchangeCapture.class.getName() + ".body";

    private final IntSupplier maxBytes;

    ExchangeCapture(IntSupplier maxBytes) {
        this.maxBytes = maxBytes;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        ServerWebExchange next = exchange;
        if (!SAFE_METHODS.contains(exchange.getRequest().getMethod().name())
                && exchange.getRequest().getHeaders().containsHeader(IdempotencyKeyHeader.NAME)) {
            Body body = new Body(maxBytes.getAsInt());
            exchange.getAttributes().put(BODY, body);
            next = exchange.mutate().request(new ServerHttpRequestDecorator(exchange.getRequest()) {
                @Override
                public Flux<DataBuffer> getBody() {
                    return super.getBody().doOnSubscribe(s -> body.read = true).doOnNext(body::copy);
                }
            }).build();
        }
        ServerWebExchange current = next;
        return chain.filter(current).contextWrite(context -> context.put(CONTEXT_KEY, current));
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE - 100;
    }

    /** The exchange being handled where {@code context} was subscribed. */
    static Optional<ServerWebExchange> exchange(ContextView context) {
        return context.getOrEmpty(CONTEXT_KEY);
    }

    /**
     * The request's body: the copy made while the method's {@code @RequestBody} was read; when nothing read it, read
     * now (a method without a body parameter: the same key with another body is still a conflict). Over the limit:
     * 413.
     */
    static Mono<byte[]> body(ServerWebExchange exchange, int maxBytes) {
        Body copied = exchange.getAttribute(BODY);
        if (copied != null && copied.read) {
            return copied.overflow ? Mono.error(tooLarge(maxBytes)) : Mono.just(copied.bytes.toByteArray());
        }
        return read(exchange.getRequest().getBody(), maxBytes);
    }

    /** {@code body} joined, at most {@code maxBytes} (more: 413). */
    static Mono<byte[]> read(Flux<DataBuffer> body, int maxBytes) {
        return DataBufferUtils.join(body, maxBytes)
                .map(joined -> {
                    byte[] bytes = new byte[joined.readableByteCount()];
                    joined.read(bytes);
                    DataBufferUtils.release(joined);
                    return bytes;
                })
                .onErrorMap(org.springframework.core.io.buffer.DataBufferLimitException.class, e -> tooLarge(maxBytes))
                .defaultIfEmpty(new byte[0]);
    }

    private static ResponseStatusException tooLarge(int maxBytes) {
        return new ResponseStatusException(HttpStatus.CONTENT_TOO_LARGE,
                "Request body exceeds " + maxBytes + " bytes (once.idempotency.max-request-body-bytes)");
    }

    /** The bytes read so far, up to the limit. */
    private static final class Body {
        final int maxBytes;
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        volatile boolean read;
        boolean overflow;

        Body(int maxBytes) {
            this.maxBytes = maxBytes;
        }

        synchronized void copy(DataBuffer buffer) {
            try (DataBuffer.ByteBufferIterator views = buffer.readableByteBuffers()) {
                while (views.hasNext()) {
                    ByteBuffer view = views.next();
                    int n = view.remaining();
                    if (bytes.size() + n > maxBytes) {
                        overflow = true;
                        return;
                    }
                    byte[] chunk = new byte[n];
                    view.get(chunk);
                    bytes.write(chunk, 0, n);
                }
            }
        }
    }
}
