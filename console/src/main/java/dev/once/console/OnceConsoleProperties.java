package dev.once.console;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** {@code once.console.*}: where the console is served, who may use it, and what its charts keep. */
@ConfigurationProperties("once.console")
public class OnceConsoleProperties {

    /** Whether the console is served. Without Spring Security it refuses to start; this switches it off instead. */
    private boolean enabled = true;

    /** Where the pages are served; the JSON API is under {@code <path>/api}. */
    private String path = Console.PATH;

    /** The authority that may look at everything but payloads, and act on nothing. */
    private String viewerAuthority = Console.VIEWER;

    /** The authority that may also act (retry, abandon, redrive, release); every action is audited. */
    private String operatorAuthority = Console.OPERATOR;

    /** How often the charts read the application's meters. */
    private Duration sampleInterval = Console.SAMPLE_INTERVAL;

    /** How many readings the charts keep. */
    private int samples = Console.SAMPLES;

    /** A processing HTTP record claimed longer ago than this counts as stuck in the overview. */
    private Duration stuckAfter = Console.STUCK_AFTER;

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getPath() {
        return path;
    }

    public void setPath(String path) {
        this.path = path;
    }

    public String getViewerAuthority() {
        return viewerAuthority;
    }

    public void setViewerAuthority(String viewerAuthority) {
        this.viewerAuthority = viewerAuthority;
    }

    public String getOperatorAuthority() {
        return operatorAuthority;
    }

    public void setOperatorAuthority(String operatorAuthority) {
        this.operatorAuthority = operatorAuthority;
    }

    public Duration getSampleInterval() {
        return sampleInterval;
    }

    public void setSampleInterval(Duration sampleInterval) {
        this.sampleInterval = sampleInterval;
    }

    public int getSamples() {
        return samples;
    }

    public void setSamples(int samples) {
        this.samples = samples;
    }

    public Duration getStuckAfter() {
        return stuckAfter;
    }

    public void setStuckAfter(Duration stuckAfter) {
        this.stuckAfter = stuckAfter;
    }
}
