package dev.once.idempotency;

import java.util.Locale;

/** The state of a record: {@code processing → succeeded | failed | expired}. Stored in lower case. */
public enum IdempotencyStatus {
    PROCESSING, SUCCEEDED, FAILED, EXPIRED;

    /** The value stored in the {@code status} column and printed in JSON. */
    public String dbValue() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static IdempotencyStatus fromDb(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }
}
