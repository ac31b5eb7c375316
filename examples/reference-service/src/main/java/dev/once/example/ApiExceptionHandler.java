package dev.once.example;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.ErrorResponse;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

/**
 * Spring MVC's own errors as RFC 9457 problems with a stable {@code code}, like Once's: a body that is not JSON (or
 * nests too deep for the parser's limits) is {@code MALFORMED_BODY}, a body over the limit {@code CONTENT_TOO_LARGE},
 * and any other the name of its status. Problems that already carry a code keep it.
 */
@RestControllerAdvice
class ApiExceptionHandler extends ResponseEntityExceptionHandler {

    @Override
    protected ResponseEntity<Object> handleExceptionInternal(Exception ex, Object body, HttpHeaders headers,
                                                             HttpStatusCode statusCode, WebRequest request) {
        if (body == null && ex instanceof ErrorResponse error) {
            body = error.getBody(); // e.g. ResponseStatusException: its problem, to which the code is added
        }
        if (body instanceof ProblemDetail problem
                && (problem.getProperties() == null || !problem.getProperties().containsKey("code"))) {
            problem.setProperty("code", code(ex, statusCode));
        }
        return super.handleExceptionInternal(ex, body, headers, statusCode, request);
    }

    private static String code(Exception ex, HttpStatusCode statusCode) {
        if (ex instanceof HttpMessageNotReadableException) {
            return "MALFORMED_BODY";
        }
        HttpStatus status = HttpStatus.resolve(statusCode.value());
        return status == null ? "HTTP_" + statusCode.value() : status.name();
    }
}
