package dev.once.audit;

import dev.once.OnceException;

/**
 * Who takes an operator action, through what, and why: what {@link OperatorAudit} records with every action.
 *
 * @param name the authenticated principal's name (the console), or the operating system's user ({@code core})
 * @param via what the action came through: {@link #CONSOLE}, {@link #CORE} or {@link #API}
 * @param reason the free text the operator gave; empty when none was asked for
 */
public record Operator(String name, String via, String reason) {

    /** The console's pages and JSON API. */
    public static final String CONSOLE = "console";
    /** The {@code core} command line. */
    public static final String CORE = "core";
    /** A Java caller of the operator API. */
    public static final String API = "api";

    /** Longest reason kept; a longer one is refused, not cut. */
    public static final int MAX_REASON = 1_000;

    public Operator {
        if (name == null || name.isBlank()) {
            throw new OnceException("an operator action needs the operator's name");
        }
        if (via == null || via.isBlank()) {
            throw new OnceException("an operator action needs what it came through (console, core, api)");
        }
        reason = reason == null ? "" : reason.strip();
        if (reason.length() > MAX_REASON) {
            throw new OnceException("an operator's reason is at most " + MAX_REASON + " characters, not "
                    + reason.length());
        }
    }

    /** The operating system's user, acting through {@code core}. */
    public static Operator core(String reason) {
        return new Operator(System.getProperty("user.name", "unknown"), CORE, reason);
    }
}
