package dev.once;

/**
 * Once cannot work as configured: thrown at startup (or when a relay or consumer first meets the problem) with what is
 * wrong and how to fix it, both naming the property, the privilege or the setting concerned. A Spring Boot
 * application prints the two as one failure report ({@code OnceConfigurationFailureAnalyzer}), without a stack trace.
 */
public class OnceConfigurationException extends OnceException {

    private final String problem;
    private final String fix;

    public OnceConfigurationException(String problem, String fix) {
        super(problem + ". " + fix);
        this.problem = problem;
        this.fix = fix;
    }

    public OnceConfigurationException(String problem, String fix, Throwable cause) {
        super(problem + ". " + fix, cause);
        this.problem = problem;
        this.fix = fix;
    }

    /** What is wrong, e.g. "PostgreSQL runs with wal_level=replica; the CDC relay needs logical". */
    public String problem() {
        return problem;
    }

    /** How to fix it, e.g. "Set wal_level = logical in postgresql.conf and restart, or set ...=polling". */
    public String fix() {
        return fix;
    }
}
