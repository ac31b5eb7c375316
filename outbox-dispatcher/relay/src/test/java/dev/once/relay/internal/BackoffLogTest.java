package dev.once.relay.internal;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** A reason is said when it is new, then at most once per interval while it lasts, and never with a stack trace. */
class BackoffLogTest {

    private final Logger logger = (Logger) LoggerFactory.getLogger("backoff-log-test-" + System.nanoTime());
    private final ListAppender<ILoggingEvent> lines = new ListAppender<>();

    BackoffLogTest() {
        lines.start();
        logger.setLevel(ch.qos.logback.classic.Level.INFO); // the recovery is said at INFO
        logger.addAppender(lines);
    }

    @Test
    void the_same_reason_is_said_once_per_interval_and_a_new_reason_at_once() {
        BackoffLog log = new BackoffLog(logger, "Relay r", Duration.ofHours(1));

        for (int i = 0; i < 5; i++) {
            log.backingOff("Kafka refused the relay's credentials", Duration.ofMinutes(1));
        }
        log.backingOff("Kafka at k:9092 did not answer within 10 s", Duration.ofSeconds(1));

        assertThat(lines.list).extracting(ILoggingEvent::getFormattedMessage).satisfiesExactly(
                first -> assertThat(first).contains("Relay r backs off", "Kafka refused the relay's credentials"),
                second -> assertThat(second).contains("Relay r backs off", "did not answer"));
        assertThat(lines.list).allSatisfy(line -> assertThat(line.getThrowableProxy()).isNull());
    }

    @Test
    void once_the_interval_passed_it_says_the_reason_again_with_the_attempts_and_then_the_recovery() {
        BackoffLog log = new BackoffLog(logger, "Relay r", Duration.ZERO);

        log.backingOff("Topic t does not exist", Duration.ofMinutes(1));
        log.backingOff("Topic t does not exist", Duration.ofMinutes(1));
        log.recovered();

        assertThat(lines.list).extracting(ILoggingEvent::getFormattedMessage).satisfiesExactly(
                first -> assertThat(first).contains("Relay r backs off"),
                again -> assertThat(again).contains("Relay r still backs off (2 attempts, 0 since last said"),
                recovered -> assertThat(recovered).contains("Relay r publishes again after 2 attempts"));
    }
}
