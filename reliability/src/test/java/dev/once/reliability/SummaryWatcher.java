package dev.once.reliability;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * Makes every failing scenario show in the {@link Summary} as FAIL, however it failed: a scenario that wrote its row
 * and then failed an assertion has that row turned to FAIL; one that failed before writing it (an await that timed
 * out, an exception) gets a FAIL row named after the test; a class whose setup or teardown failed gets one FAIL row. The note
 * says what failed. Scenarios register it with {@code @ExtendWith(SummaryWatcher.class)}.
 */
final class SummaryWatcher implements BeforeEachCallback, TestWatcher, AfterAllCallback {

    @Override
    public void beforeEach(ExtensionContext context) {
        Summary.testStarted();
    }

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        Summary.failed(testName(context), cause);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        // set when @BeforeAll (or @AfterAll, or a class-level extension) threw; its tests' own failures are not here
        context.getExecutionException().ifPresent(cause -> Summary.failedOutsideTests(
                context.getRequiredTestClass().getSimpleName() + " (setup or teardown)", cause));
    }

    /** {@code ProcessCrashIT kill_minus_9_... [cdc relay]}: the class, the method and a parameterized invocation. */
    static String testName(ExtensionContext context) {
        String method = context.getRequiredTestMethod().getName();
        String display = context.getDisplayName();
        return context.getRequiredTestClass().getSimpleName() + " " + method
                + (display.startsWith(method + "(") ? "" : " [" + display + "]");
    }
}
