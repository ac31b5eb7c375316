package dev.once.example;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponseException;

/** RFC 9457 problems with a stable {@code code}, as Once's own problems carry one. */
public final class ApiProblem {

    private ApiProblem() {
    }

    public static ErrorResponseException of(HttpStatus status, String code, String detail) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
        problem.setProperty("code", code);
        return new ErrorResponseException(status, problem, null);
    }

    public static ErrorResponseException notFound(String what) {
        return of(HttpStatus.NOT_FOUND, "NOT_FOUND", "No " + what + " with this id in your tenant.");
    }

    public static ErrorResponseException invalid(String detail) {
        return of(HttpStatus.BAD_REQUEST, "VALIDATION_FAILED", detail);
    }
}
