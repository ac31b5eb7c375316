package dev.once.guard.web;

import dev.once.guard.FailureMapper;
import dev.once.guard.Problems;
import dev.once.idempotency.StoredResponse;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponse;
import org.springframework.web.bind.annotation.ResponseStatus;

/**
 * Maps a guarded handler's exception to the problem+json response that is returned and stored: Spring's
 * {@link ErrorResponse} (e.g. {@code ResponseStatusException}) keeps its status and problem, an exception annotated
 * with {@link ResponseStatus} keeps its status, and anything else is a 500 that reveals no internals. Every problem
 * carries a {@code code}: the one the exception set, else the status name.
 */
public final class WebFailureMapper implements FailureMapper {

    @Override
    public StoredResponse toResponse(Throwable failure) {
        if (failure instanceof ErrorResponse error) {
            return problem(error.getStatusCode().value(), error.getBody());
        }
        ResponseStatus status = AnnotatedElementUtils.findMergedAnnotation(failure.getClass(), ResponseStatus.class);
        if (status != null) {
            String reason = status.reason().isEmpty() ? null : status.reason();
            return problem(status.code().value(), ProblemDetail.forStatusAndDetail(status.code(), reason));
        }
        return FailureMapper.INTERNAL_ERROR.toResponse(failure);
    }

    static StoredResponse problem(int status, ProblemDetail problem) {
        Map<String, Object> members = new LinkedHashMap<>();
        members.put("type", problem.getType() == null ? "about:blank" : problem.getType().toString());
        members.put("title", problem.getTitle());
        members.put("status", status);
        if (problem.getDetail() != null) {
            members.put("detail", problem.getDetail());
        }
        if (problem.getInstance() != null) {
            members.put("instance", problem.getInstance().toString());
        }
        if (problem.getProperties() != null) {
            members.putAll(problem.getProperties());
        }
        HttpStatus known = HttpStatus.resolve(status);
        members.putIfAbsent("code", known == null ? "HTTP_" + status : known.name());
        return Problems.response(status, members);
    }
}
