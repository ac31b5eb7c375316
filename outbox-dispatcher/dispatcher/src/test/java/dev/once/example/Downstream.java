package dev.once.example;

/** A handler's downstream calls, outside the dispatcher's packages: where a handler's failures are thrown. */
public final class Downstream {

    private Downstream() {
    }

    public static Exception sendMail(String message) {
        return new IllegalStateException(message);
    }

    public static Exception chargeCard(String message) {
        return new IllegalStateException(message);
    }

    public static Exception timeOut(String message) {
        return new java.io.UncheckedIOException(message, new java.io.IOException(message));
    }
}
