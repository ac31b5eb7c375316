package dev.once.guard.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class RateLimitedLogTest {

    @Test
    void a_failure_repeated_by_every_request_is_logged_once_with_its_stack_trace_and_then_not_again_within_the_window() {
        Logger logger = logger();
        ListAppender<ILoggingEvent> events = events(logger);
        RateLimitedLog log = new RateLimitedLog(logger);

        for (int i = 0; i < 1_000; i++) {
            log.warn("Guard of {} failed", new IllegalStateException("boom " + i), "POST /accounts");
        }
        log.warn("Guard of {} failed", new IllegalArgumentException("another kind"), "POST /accounts");

        assertThat(events.list).hasSize(2);
        assertThat(events.list.get(0).getFormattedMessage()).isEqualTo("Guard of POST /accounts failed");
        assertThat(events.list.get(0).getThrowableProxy().getMessage()).isEqualTo("boom 0");
        assertThat(events.list.get(1).getThrowableProxy().getClassName()).isEqualTo(IllegalArgumentException.class.getName());
    }

    @Test
    void after_the_window_one_line_without_stack_trace_counts_the_failures_left_out() {
        Logger logger = logger();
        ListAppender<ILoggingEvent> events = events(logger);
        RateLimitedLog log = new RateLimitedLog(logger, Duration.ofMillis(200));
        log.warn("Commit for {} failed", new IllegalStateException("first"), "k");
        log.warn("Commit for {} failed", new IllegalStateException("left out"), "k");

        await().atMost(Duration.ofSeconds(30)).until(() -> {
            log.warn("Commit for {} failed", new IllegalStateException("later"), "k");
            return events.list.size() == 2;
        });

        assertThat(events.list.get(1).getThrowableProxy()).isNull();
        assertThat(events.list.get(1).getFormattedMessage()).startsWith("Commit for k failed: ")
                .contains("java.lang.IllegalStateException: later").containsPattern("\\(\\d+ more like it");
    }

    private static Logger logger() {
        return (Logger) LoggerFactory.getLogger("rate-limited-test-" + System.nanoTime());
    }

    private static ListAppender<ILoggingEvent> events(Logger logger) {
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        events.start();
        logger.addAppender(events);
        return events;
    }
}
