package dev.once.guard.web;

import dev.once.guard.MutationContext;
import dev.once.idempotency.ClaimToken;
import dev.once.idempotency.IdempotencyScope;
import dev.once.outbox.OutboxEvent;
import java.util.UUID;
import org.springframework.core.MethodParameter;
import org.springframework.web.bind.support.WebDataBinderFactory;
import org.springframework.web.context.request.NativeWebRequest;
import org.springframework.web.method.support.HandlerMethodArgumentResolver;
import org.springframework.web.method.support.ModelAndViewContainer;

/**
 * Lets an {@link Idempotent} controller method declare a {@link MutationContext} parameter. Arguments are resolved
 * before the guard claims the key, so the parameter is a stand-in that delegates to the context of the guarded call
 * running on the current thread; using it anywhere else is an error.
 */
final class CurrentMutation implements MutationContext, HandlerMethodArgumentResolver {

    private static final ThreadLocal<MutationContext> CURRENT = new ThreadLocal<>();

    static void set(MutationContext context) {
        CURRENT.set(context);
    }

    static void clear() {
        CURRENT.remove();
    }

    private static MutationContext current() {
        MutationContext context = CURRENT.get();
        if (context == null) {
            throw new IllegalStateException("MutationContext is only available while an @Idempotent method runs");
        }
        return context;
    }

    @Override
    public IdempotencyScope scope() {
        return current().scope();
    }

    @Override
    public ClaimToken token() {
        return current().token();
    }

    @Override
    public UUID append(OutboxEvent event) {
        return current().append(event);
    }

    @Override
    public OutboxEvent.Builder event(String aggregateType, String aggregateId, String eventType, int version) {
        return current().event(aggregateType, aggregateId, eventType, version);
    }

    @Override
    public void bindTask(String taskId) {
        current().bindTask(taskId);
    }

    @Override
    public boolean supportsParameter(MethodParameter parameter) {
        return parameter.getParameterType() == MutationContext.class;
    }

    @Override
    public Object resolveArgument(MethodParameter parameter, ModelAndViewContainer mav, NativeWebRequest request,
                                  WebDataBinderFactory binderFactory) {
        return this;
    }
}
