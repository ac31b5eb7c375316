package dev.once.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** A problem that lasts is logged when it appears, then once per window, with its stack trace at most once. */
class RateLimitedLogTest {

    static final Duration WINDOW = Duration.ofMillis(300);
    static final Duration RETRY = Duration.ofSeconds(4);

    final Logger logger = (Logger) LoggerFactory.getLogger("dev.once.spi.RateLimitedLogTest");
    final ListAppender<ILoggingEvent> logged = new ListAppender<>();
    final RateLimitedLog problems = new RateLimitedLog(logger, "CDC relay cdc", WINDOW);

    @BeforeEach
    void capture() {
        logged.start();
        logger.addAppender(logged);
    }

    @AfterEach
    void release() {
        logger.detachAppender(logged);
    }

    @Test
    void a_lasting_misconfiguration_is_logged_once_per_window_counting_the_attempts_and_never_with_a_stack_trace() {
        IllegalStateException cause = new IllegalStateException("wal_level");
        for (int i = 0; i < 5; i++) {
            problems.report("wal_level is replica", cause, RateLimitedLog.Kind.MISCONFIGURATION, RETRY);
        }
        assertThat(logged.list).hasSize(1);
        passWindow();
        problems.report("wal_level is replica", cause, RateLimitedLog.Kind.MISCONFIGURATION, RETRY);

        assertThat(logged.list).hasSize(2).allSatisfy(e -> {
            assertThat(e.getLevel()).isEqualTo(Level.ERROR);
            assertThat(e.getThrowableProxy()).isNull();
        });
        assertThat(logged.list.get(0).getFormattedMessage())
                .isEqualTo("CDC relay cdc: wal_level is replica; next attempt in 4 s");
        assertThat(logged.list.get(1).getFormattedMessage())
                .isEqualTo("CDC relay cdc: wal_level is replica; next attempt in 4 s (5 attempts since it was last logged)");
    }

    @Test
    void an_unforeseen_failure_carries_its_stack_trace_the_first_time_only() {
        IllegalStateException cause = new IllegalStateException("boom");
        problems.report("engine stopped: boom", cause, RateLimitedLog.Kind.FAILURE, RETRY);
        passWindow();
        problems.report("engine stopped: boom", cause, RateLimitedLog.Kind.FAILURE, RETRY);

        assertThat(logged.list).extracting(e -> e.getThrowableProxy() != null).containsExactly(true, false);
    }

    @Test
    void a_changed_problem_is_logged_at_once_an_outage_at_warn_and_the_end_of_a_problem_at_info() {
        problems.report("cannot reach PostgreSQL", null, RateLimitedLog.Kind.OUTAGE, RETRY);
        problems.report("wal_level is replica", null, RateLimitedLog.Kind.MISCONFIGURATION, RETRY);
        assertThat(problems.reporting()).isTrue();
        problems.resolved();
        problems.resolved();

        List<ILoggingEvent> events = logged.list;
        assertThat(events).extracting(ILoggingEvent::getLevel).containsExactly(Level.WARN, Level.ERROR, Level.INFO);
        assertThat(events.get(2).getFormattedMessage()).isEqualTo("CDC relay cdc: over: wal_level is replica");
        assertThat(problems.reporting()).isFalse();
    }

    @Test
    void a_number_that_moves_in_the_message_does_not_make_it_news() {
        problems.report("slot s1 is active for PID 4242", null, RateLimitedLog.Kind.FAILURE, RETRY);
        problems.report("slot s1 is active for PID 4243", null, RateLimitedLog.Kind.FAILURE, RETRY);
        problems.report("slot s1 belongs to database other", null, RateLimitedLog.Kind.MISCONFIGURATION, RETRY);

        assertThat(logged.list).extracting(ILoggingEvent::getFormattedMessage).containsExactly(
                "CDC relay cdc: slot s1 is active for PID 4242; next attempt in 4 s",
                "CDC relay cdc: slot s1 belongs to database other; next attempt in 4 s");
    }

    @Test
    void pauses_under_a_second_read_in_fractions() {
        assertThat(RateLimitedLog.seconds(Duration.ofMillis(200))).isEqualTo("0.2");
        assertThat(RateLimitedLog.seconds(Duration.ofSeconds(60))).isEqualTo("60");
    }

    private static void passWindow() {
        long from = System.nanoTime();
        await().pollInterval(Duration.ofMillis(20)).until(() -> System.nanoTime() - from > WINDOW.toNanos());
    }
}
