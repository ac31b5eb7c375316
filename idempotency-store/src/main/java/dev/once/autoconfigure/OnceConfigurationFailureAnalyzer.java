package dev.once.autoconfigure;

import dev.once.OnceConfigurationException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports a {@link OnceConfigurationException} that stopped an application from starting as Spring Boot reports its
 * own configuration errors: one description, one action, no stack trace to read through.
 */
public class OnceConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<OnceConfigurationException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, OnceConfigurationException cause) {
        return new FailureAnalysis(cause.problem() + ".", cause.fix(), cause);
    }
}
