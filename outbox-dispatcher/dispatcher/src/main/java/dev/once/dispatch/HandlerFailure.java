package dev.once.dispatch;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * What is kept of a handler's failure with its parked event: the handlers that failed, the exception's class, at
 * most {@link #MESSAGE_LIMIT} characters of its message, and a fingerprint (the exception class and the handler's own
 * frame, hashed) that groups failures by cause. No stack trace and no cause chain are kept; the message is the
 * handler's own, so a handler must not put secrets in its exceptions' messages.
 */
record HandlerFailure(List<String> handlerKeys, String exceptionClass, String message, String fingerprint) {

    /** The most characters of a failure's message that are kept. */
    static final int MESSAGE_LIMIT = 500;

    /** Frames of these packages are the dispatcher's and the platform's, not the handler's. */
    private static final List<String> NOT_THE_HANDLER = List.of("java.", "javax.", "jdk.", "sun.", "com.sun.",
            "org.springframework.", "dev.once.dispatch.", "io.micrometer.");

    static HandlerFailure of(HandlerFailedException failure) {
        Throwable cause = failure.getCause() == null ? failure : failure.getCause();
        String message = String.valueOf(cause.getMessage());
        if (message.length() > MESSAGE_LIMIT) { // never half a character: a lone surrogate is no text to store
            message = message.substring(0, Character.isHighSurrogate(message.charAt(MESSAGE_LIMIT - 1))
                    ? MESSAGE_LIMIT - 1 : MESSAGE_LIMIT);
        }
        String className = cause.getClass().getName();
        return new HandlerFailure(failure.handlerKeys(), className, message,
                fingerprint(className + "@" + handlerFrame(cause)));
    }

    /** The innermost frame that belongs to neither the platform nor the dispatcher: where the handler threw. */
    private static String handlerFrame(Throwable cause) {
        for (StackTraceElement frame : cause.getStackTrace()) {
            String className = frame.getClassName();
            if (NOT_THE_HANDLER.stream().noneMatch(className::startsWith)) {
                return className + "." + frame.getMethodName();
            }
        }
        return "";
    }

    private static String fingerprint(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every Java platform", e);
        }
    }
}
