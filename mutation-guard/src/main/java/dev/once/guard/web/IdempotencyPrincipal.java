package dev.once.guard.web;

/** Who sends a guarded request: the tenant and user its keys are scoped to. */
public record IdempotencyPrincipal(String tenantId, String userId) {
}
