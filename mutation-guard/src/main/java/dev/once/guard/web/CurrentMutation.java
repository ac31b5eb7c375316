package dev.once.guard.web;

import dev.once.guard.MutationContext;
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
final class CurrentMutation extends StandInMutationContext implements HandlerMethodArgumentResolver {

    private static final ThreadLocal<MutationContext> CURRENT = new ThreadLocal<>();

    static void set(MutationContext context) {
        CURRENT.set(context);
    }

    static void clear() {
        CURRENT.remove();
    }

    @Override
    MutationContext bound() {
        return CURRENT.get();
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
