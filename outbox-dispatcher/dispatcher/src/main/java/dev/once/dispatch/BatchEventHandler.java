package dev.once.dispatch;

import java.util.List;

/**
 * Handles a run of events of one type at once, in the transaction of their claims: a TRANSACTIONAL handler that
 * writes a poll's events with one statement (a JDBC batch, a multi-row insert) instead of one per event. The events
 * come in the order of their records; none has been handled before (redeliveries are skipped before the call).
 * Throwing rolls back the call's claims and effects together; the dispatcher then attempts the events again in smaller
 * runs, down to one, so that the event that fails is found and retried (and, in the end, dead-lettered) alone.
 */
@FunctionalInterface
public interface BatchEventHandler {

    void handle(List<HandledEvent> events) throws Exception;
}
