package dev.once.outbox;

import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Time-ordered UUIDs (RFC 9562 version 7): 48 bits of Unix milliseconds, then random bits. Ids from one JVM are
 * strictly increasing (a 12-bit counter orders ids within a millisecond); ids from several instances order by
 * millisecond. Event ids are identifiers, not secrets, so the random bits come from {@link ThreadLocalRandom}.
 * Thread-safe.
 */
public final class UuidV7 {

    private static long lastMillis;
    private static int counter;

    private UuidV7() {
    }

    public static UUID next() {
        long millis;
        int sequence;
        synchronized (UuidV7.class) {
            millis = Math.max(System.currentTimeMillis(), lastMillis);
            if (millis == lastMillis) {
                counter++;
                if (counter > 0xFFF) { // 4096 ids in one millisecond: borrow the next millisecond
                    millis++;
                    counter = 0;
                }
            } else {
                counter = ThreadLocalRandom.current().nextInt(0x800); // random start, leaving room to count up
            }
            lastMillis = millis;
            sequence = counter;
        }
        long msb = (millis << 16) | 0x7000L | sequence;
        long lsb = (ThreadLocalRandom.current().nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(msb, lsb);
    }
}
