package dev.once.guard.web;

import dev.once.idempotency.StoredResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.context.request.ServletWebRequest;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

/**
 * Answers what Spring MVC refuses on an {@link Idempotent} route before the guard runs (a body that does not parse,
 * an unsupported media type, a missing parameter, an argument that does not convert) as problem+json with a stable
 * {@code code}, like the guard's own answers: a body Jackson cannot read is {@code MALFORMED_BODY}, anything else the
 * name of its status. Exceptions Spring MVC does not know are left to whoever handles them today (Spring Security's
 * firewall answers its own, for instance); the guard's own failures never get this far. It comes after the
 * application's own {@code @ExceptionHandler}s, which keep precedence, and touches no other route.
 */
final class GuardedRouteErrors implements HandlerExceptionResolver {

    /** Spring MVC's own mapping of its exceptions to statuses and problem details. */
    private final ResponseEntityExceptionHandler springMvc = new ResponseEntityExceptionHandler() { };

    @Override
    public ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response, Object handler,
                                         Exception failure) {
        if (!(handler instanceof HandlerMethod method)
                || !AnnotatedElementUtils.hasAnnotation(method.getMethod(), Idempotent.class) || response.isCommitted()) {
            return null;
        }
        ResponseEntity<Object> known = knownToSpringMvc(failure, request, response);
        if (known == null || !(known.getBody() instanceof ProblemDetail detail)) {
            return null;
        }
        if (failure instanceof HttpMessageNotReadableException) {
            detail.setProperty("code", "MALFORMED_BODY");
        }
        StoredResponse problem = WebFailureMapper.problem(known.getStatusCode().value(), detail);
        HttpHeaders headers = known.getHeaders();
        try {
            response.setStatus(problem.statusCode());
            for (Map.Entry<String, List<String>> header : headers.headerSet()) {
                header.getValue().forEach(value -> response.addHeader(header.getKey(), value));
            }
            response.setContentType(problem.contentType());
            response.setContentLength(problem.bodyLength());
            problem.writeBodyTo(response.getOutputStream());
            response.flushBuffer();
        } catch (IOException e) {
            return new ModelAndView(); // the client went away: there is nobody left to answer
        }
        return new ModelAndView();
    }

    private ResponseEntity<Object> knownToSpringMvc(Exception failure, HttpServletRequest request,
                                                    HttpServletResponse response) {
        try {
            return springMvc.handleException(failure, new ServletWebRequest(request, response));
        } catch (Exception unknown) {
            return null; // rethrown: not one of Spring MVC's own
        }
    }
}
