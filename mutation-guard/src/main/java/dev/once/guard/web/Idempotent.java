package dev.once.guard.web;

import dev.once.guard.InProgressBehaviour;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Declares a Spring MVC handler method idempotent: requests carrying the same {@code Idempotency-Key} (per tenant,
 * user and route) take effect once, and repeats replay the first response. Only methods carrying this annotation are
 * guarded; safe methods (GET, HEAD, OPTIONS, TRACE) never are. The method must return {@code ResponseEntity<?>},
 * because the guard stores and replays the serialised response.
 *
 * <p>Empty strings and arrays mean "the configured default" ({@code once.idempotency.*}).
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface Idempotent {

    /** A request without a key gets 400 IDEMPOTENCY_KEY_MISSING; when false it runs unguarded. */
    boolean keyRequired() default true;

    /** What a request finds while the same key is in progress: 409 at once, or wait and replay. */
    InProgressBehaviour inProgress() default InProgressBehaviour.REJECT;

    /** With {@code WAIT}: the longest wait, e.g. {@code "5s"}. */
    String waitMax() default "";

    /** Whether a repeat of a failed request runs again. High-risk writes keep the default: it does not. */
    boolean retryFailed() default false;

    /**
     * Commit the claim synchronously before the method runs. Needed only when the method leaves something outside the
     * database under a name derived from the claim ({@code MutationContext.token().recordId()}): a claim committed
     * asynchronously (the default, one disk flush fewer) can be forgotten by a database crash, and the retry then
     * runs under another record id.
     */
    boolean durableClaim() default false;

    /** How long a claim is held, e.g. {@code "30s"}. */
    String lease() default "";

    /** How long the key is remembered, e.g. {@code "24h"}. */
    String ttl() default "";

    /** Response statuses that are not stored (the key is released instead), e.g. {@code {429, 503}}. */
    int[] transientStatuses() default {};
}
