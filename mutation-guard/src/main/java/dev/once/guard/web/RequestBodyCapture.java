package dev.once.guard.web;

import jakarta.servlet.http.HttpServletRequest;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Type;
import org.springframework.core.MethodParameter;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpInputMessage;
import org.springframework.http.HttpStatus;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.servlet.mvc.method.annotation.RequestBodyAdviceAdapter;

/**
 * Keeps the raw bytes of an {@link Idempotent} method's {@code @RequestBody} while Spring reads it, so the request can
 * be fingerprinted byte-exactly. Applies to {@link Idempotent} methods only; other routes are untouched. A body over
 * the limit is refused with 413 before anything runs.
 */
@ControllerAdvice
public class RequestBodyCapture extends RequestBodyAdviceAdapter {

    static final String ATTRIBUTE = RequestBodyCapture.class.getName() + ".body";
    private static final byte[] NONE = new byte[0];

    private final int maxBytes;

    public RequestBodyCapture(int maxBytes) {
        this.maxBytes = maxBytes;
    }

    /**
     * The body of the current request: the bytes captured while Spring read the method's {@code @RequestBody}; for a
     * method that reads no body, whatever the client sent anyway (so the same key with another body is still a 422),
     * up to {@code maxBytes} (over it: 413); an empty array when there is none.
     */
    static byte[] body(HttpServletRequest request, int maxBytes) throws IOException {
        Object body = request.getAttribute(ATTRIBUTE);
        if (body instanceof byte[] bytes) {
            return bytes;
        }
        String type = request.getContentType();
        if (type != null && type.toLowerCase(java.util.Locale.ROOT).startsWith("application/x-www-form-urlencoded")) {
            return NONE; // read as parameters, which the fingerprint covers
        }
        byte[] unread = request.getInputStream().readNBytes(maxBytes + 1);
        if (unread.length > maxBytes) {
            throw new ResponseStatusException(HttpStatus.CONTENT_TOO_LARGE,
                    "Request body exceeds " + maxBytes + " bytes (once.idempotency.max-request-body-bytes)");
        }
        return unread.length == 0 ? NONE : unread;
    }

    @Override
    public boolean supports(MethodParameter parameter, Type targetType,
                            Class<? extends HttpMessageConverter<?>> converterType) {
        return parameter.hasMethodAnnotation(Idempotent.class);
    }

    @Override
    public HttpInputMessage beforeBodyRead(HttpInputMessage input, MethodParameter parameter, Type targetType,
                                           Class<? extends HttpMessageConverter<?>> converterType) throws IOException {
        byte[] bytes = input.getBody().readNBytes(maxBytes + 1);
        if (bytes.length > maxBytes) {
            throw new ResponseStatusException(HttpStatus.CONTENT_TOO_LARGE,
                    "Request body exceeds " + maxBytes + " bytes (once.idempotency.max-request-body-bytes)");
        }
        RequestContextHolder.currentRequestAttributes().setAttribute(ATTRIBUTE, bytes, RequestAttributes.SCOPE_REQUEST);
        return new HttpInputMessage() {
            @Override
            public InputStream getBody() {
                return new ByteArrayInputStream(bytes);
            }

            @Override
            public HttpHeaders getHeaders() {
                return input.getHeaders();
            }
        };
    }
}
