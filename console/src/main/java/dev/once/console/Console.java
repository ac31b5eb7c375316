package dev.once.console;

import java.time.Duration;

/**
 * Once's operator console: pages and a JSON API served by the application itself under {@link #PATH}, for users of
 * the application's Spring Security with authority {@link #VIEWER} (sees everything but payloads, acts on nothing) or
 * {@link #OPERATOR} (also acts: every action is written to the operator audit in the same transaction as its effect).
 * These are the defaults of {@code once.console.*}.
 */
final class Console {

    /** Where the console is served; its JSON API is under {@code <path>/api}. */
    public static final String PATH = "/once";
    /** The authority that may look. */
    public static final String VIEWER = "ONCE_VIEWER";
    /** The authority that may also act. */
    public static final String OPERATOR = "ONCE_OPERATOR";
    /** How often the charts' figures are read from the application's meters. */
    public static final Duration SAMPLE_INTERVAL = Duration.ofSeconds(10);
    /** How many samples the charts keep: an hour at the default interval. */
    public static final int SAMPLES = 360;
    /** A processing HTTP record claimed longer ago than this counts as stuck in the overview. */
    public static final Duration STUCK_AFTER = Duration.ofMinutes(5);

    private Console() {
    }
}
