package dev.once.idempotency;

import static dev.once.idempotency.IdempotencyDefaults.MAX_SCOPE_PART_LENGTH;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The stable name of an operation that idempotency keys are scoped to: an HTTP route template such as
 * {@code POST /accounts/{id}/files}, or a handler route such as {@code AccountCreated:v1:account-projection}.
 * Never a raw path: {@link #http} refuses literal segments that look like identifiers, so that
 * {@code /accounts/42} and {@code /accounts/43} cannot silently become two scopes. Immutable.
 */
public record Route(String value) {

    private static final Pattern METHOD = Pattern.compile("[A-Z]+");
    private static final Pattern VARIABLE = Pattern.compile("\\{[^{}/]+}");
    private static final Pattern IDENTIFIER_LIKE = Pattern.compile(
            "\\d+|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-fA-F]{16,}");

    public Route {
        if (value == null || value.isBlank()) {
            throw new InvalidScopeException("route", "route is empty; use a stable template such as 'POST /accounts'");
        }
        if (value.length() > MAX_SCOPE_PART_LENGTH) {
            throw new InvalidScopeException("route", "route is " + value.length() + " characters long; at most "
                    + MAX_SCOPE_PART_LENGTH + " are allowed");
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c > 0x7E) {
                throw new InvalidScopeException("route", "route contains " + String.format("U+%04X", (int) c)
                        + " at index " + i + "; only printable ASCII is allowed");
            }
        }
    }

    /** A route named freely, e.g. a Kafka handler's {@code <event_type>:v<version>:<handler_key>}. */
    public static Route of(String value) {
        return new Route(value);
    }

    /**
     * An HTTP route from a method and a path template, e.g. {@code http("post", "/accounts/{id}/files")} is
     * {@code POST /accounts/{id}/files}.
     *
     * @throws InvalidScopeException when the template is not a template (a segment looks like an id or a UUID)
     */
    public static Route http(String method, String pathTemplate) {
        String verb = method == null ? "" : method.trim().toUpperCase(Locale.ROOT);
        if (!METHOD.matcher(verb).matches()) {
            throw new InvalidScopeException("route", "route method '" + method + "' is not an HTTP method");
        }
        if (pathTemplate == null || !pathTemplate.startsWith("/")) {
            throw new InvalidScopeException("route", "route path template '" + pathTemplate + "' must start with '/'");
        }
        for (String segment : pathTemplate.split("/")) {
            if (!VARIABLE.matcher(segment).matches() && IDENTIFIER_LIKE.matcher(segment).matches()) {
                throw new InvalidScopeException("route", "route '" + pathTemplate + "' looks like a raw path: segment '"
                        + segment + "' looks like an identifier; use a template such as /accounts/{id}");
            }
        }
        return new Route(verb + " " + pathTemplate);
    }

    @Override
    public String toString() {
        return value;
    }
}
