package dev.once.guard.web;

import jakarta.servlet.http.HttpServletRequest;
import java.util.Optional;

/**
 * Finds the tenant and user of a request from its <em>authenticated</em> principal. Never take them from a header the
 * client controls: a forged tenant would read another tenant's responses. An empty result answers 401.
 */
@FunctionalInterface
public interface IdempotencyPrincipalResolver {

    Optional<IdempotencyPrincipal> resolve(HttpServletRequest request);
}
