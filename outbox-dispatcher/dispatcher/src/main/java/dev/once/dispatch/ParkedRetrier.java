package dev.once.dispatch;

import dev.once.spi.RateLimitedLog;
import dev.once.spi.Rounds;
import dev.once.spi.TransientFailures;
import java.time.Duration;
import java.util.Optional;
import java.util.function.BiConsumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs parked keys again, in the background, on every instance of the group: each round takes due heads one at a
 * time ({@link ParkingLot#take}, a lease by the database clock, so each head runs on one instance at a time, and only
 * on an instance that has a handler for it) and runs each through the dispatcher's own path, until none is due. A
 * head that succeeds gives way to the next event of its key at once, so a key drains in order. A head that fails
 * again waits longer ({@link ParkingPolicy}); past its window it is dead-lettered and stays failed, holding its key,
 * until an operator acts. The database's failures are not the handler's: the lease is given back and the round ends.
 */
final class ParkedRetrier implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ParkedRetrier.class);

    /** How long abandoned rows are kept, and how often a round purges them. */
    private static final Duration PURGE_EVERY = Duration.ofMinutes(10);

    private final ParkingLot lot;
    private final EventDispatcher dispatcher;
    private final Duration lease;
    private final Duration abandonedRetention;
    private final BiConsumer<ConsumerRecord<String, byte[]>, RuntimeException> deadLetter;
    private final RateLimitedLog problems;
    private final Rounds rounds;
    private boolean recovered;
    private long purgedAt = System.nanoTime();

    /**
     * @param lease how long a head is leased while it runs: the handlers' claim lease
     * @param abandonedRetention how long abandoned rows are kept: the claim retention
     * @param deadLetter publishes a record to its dead-letter topic with the failure that ended it
     */
    ParkedRetrier(ParkingLot lot, EventDispatcher dispatcher, Duration lease, Duration abandonedRetention,
                  BiConsumer<ConsumerRecord<String, byte[]>, RuntimeException> deadLetter) {
        this.lot = lot;
        this.dispatcher = dispatcher;
        this.lease = lease;
        this.abandonedRetention = abandonedRetention;
        this.deadLetter = deadLetter;
        this.problems = new RateLimitedLog(log, "Parked events of group " + lot.group());
        this.rounds = new Rounds("once-parked-" + lot.group(), lot.policy().lookInterval(), this::round);
    }

    void start() {
        rounds.start();
    }

    private void round() {
        try {
            if (!recovered) {
                lot.promoteAll(); // a crash between a head's delete and its successor's promotion left it waiting
                recovered = true;
            }
            if (System.nanoTime() - purgedAt > PURGE_EVERY.toNanos()) {
                lot.purgeAbandoned(abandonedRetention);
                purgedAt = System.nanoTime();
            }
            Optional<ParkingLot.Parked> head;
            while (!rounds.closing() && (head = lot.take(dispatcher.handledKeys(), lease)).isPresent()) {
                run(head.get());
            }
            problems.resolved();
        } catch (RuntimeException e) {
            problems.report(String.valueOf(e.getMessage()), e, TransientFailures.isTransient(e)
                    ? RateLimitedLog.Kind.OUTAGE : RateLimitedLog.Kind.FAILURE, lot.policy().lookInterval());
        }
    }

    private void run(ParkingLot.Parked head) {
        EventDispatcher.Retried retried = dispatcher.retry(head.record(), head.failedHandlers());
        switch (retried.outcome()) {
            case DONE -> {
                lot.done(head);
                dispatcher.listener().unparked("handled");
            }
            case HELD -> lot.held(head);
            case POISON -> {
                deadLetter.accept(head.record(), retried.cause());
                lot.done(head);
                dispatcher.listener().unparked("dead_lettered");
            }
            case FAILED -> {
                HandlerFailedException failure = (HandlerFailedException) retried.cause();
                if (lot.failed(head, HandlerFailure.of(failure))) {
                    deadLetter.accept(head.record(), new RetriesExhaustedException(failure, head.attempts() + 1));
                    dispatcher.listener().deadLettered(String.valueOf(failure.getMessage()));
                    dispatcher.listener().unparked("failed");
                    log.warn("Parked {}-{}@{} failed for its whole retry window ({} attempts) and was dead-lettered; "
                                    + "its key stays parked behind it until `core dispatch parked retry` or `abandon`",
                            head.record().topic(), head.record().partition(), head.record().offset(),
                            head.attempts() + 1);
                }
            }
            case NOT_NOW -> {
                lot.release(head);
                throw retried.cause();
            }
        }
    }

    @Override
    public void close() {
        rounds.close();
    }

    /** A parked event's handlers failed for its whole retry window. */
    static final class RetriesExhaustedException extends RuntimeException {
        private final int attempts;

        RetriesExhaustedException(HandlerFailedException failure, int attempts) {
            super(failure.getMessage(), failure);
            this.attempts = attempts;
        }

        int attempts() {
            return attempts;
        }
    }
}
