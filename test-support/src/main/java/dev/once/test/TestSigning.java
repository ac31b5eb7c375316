package dev.once.test;

/**
 * The signing key ring of the tests' Boot services ({@code once.outbox.signing.*}): the relay signs with it and the
 * dispatcher verifies with it, as every service that shares Once's topics shares one ring.
 */
public final class TestSigning {

    public static final String KEY_ID = "test-1";

    /** A test secret, never a real one: at least 32 bytes, as every key must be. */
    public static final String SECRET = "the tests' signing secret, not for production";

    /** The property that puts the key in the ring. */
    public static final String PROPERTY = "once.outbox.signing.keys." + KEY_ID + "=" + SECRET;

    private TestSigning() {
    }
}
