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

    /** The captured body of the current request, or an empty array when it had none. */
    static byte[] body(HttpServletRequest request) {
        Object body = request.getAttribute(ATTRIBUTE);
        return body instanceof byte[] bytes ? bytes : NONE;
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
