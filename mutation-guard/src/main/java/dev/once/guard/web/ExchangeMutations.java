package dev.once.guard.web;

import dev.once.guard.MutationContext;
import org.springframework.core.MethodParameter;
import org.springframework.web.reactive.BindingContext;
import org.springframework.web.reactive.result.method.SyncHandlerMethodArgumentResolver;
import org.springframework.web.server.ServerWebExchange;

/**
 * The {@link MutationContext} of a WebFlux request: an {@link Idempotent} method's parameter, or
 * {@link IdempotentHandlerFilter#context} in a functional handler. Arguments are resolved before the guard claims
 * the key, so each exchange gets a stand-in that the guard binds to its run's context before the work is subscribed;
 * it is the exchange's, not a thread's, so it works on whatever thread the work continues.
 */
final class ExchangeMutations implements SyncHandlerMethodArgumentResolver {

    private static final String ATTRIBUTE = ExchangeMutations.class.getName() + ".context";

    static Bound of(ServerWebExchange exchange) {
        return (Bound) exchange.getAttributes().computeIfAbsent(ATTRIBUTE, k -> new Bound());
    }

    @Override
    public boolean supportsParameter(MethodParameter parameter) {
        return parameter.getParameterType() == MutationContext.class;
    }

    @Override
    public Object resolveArgumentValue(MethodParameter parameter, BindingContext bindingContext,
                                       ServerWebExchange exchange) {
        return of(exchange);
    }

    /** The exchange's context, delegating to the guarded run's once it is bound. */
    static final class Bound extends StandInMutationContext {

        private volatile MutationContext current;

        void bind(MutationContext context) {
            this.current = context;
        }

        @Override
        MutationContext bound() {
            return current;
        }
    }
}
