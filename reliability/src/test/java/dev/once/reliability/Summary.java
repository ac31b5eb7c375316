package dev.once.reliability;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The suite's summary: one row per scenario, written by each scenario as it ends to
 * {@code target/reliability/rows/<scenario>.tsv} (a rerun replaces its row), and printed as a table by
 * {@code reliability/run}. A scenario that fails after its row was written, or before it could write one, gets a
 * FAIL row all the same, from {@link SummaryWatcher}.
 */
final class Summary {

    /** A scenario's row; a count below zero is one the scenario never got to measure, printed as {@code -}. */
    record Row(String scenario, long operations, long faults, long lost, long duplicated, boolean passed, String notes) {

        static Row failedBeforeMeasuring(String scenario, String notes) {
            return new Row(scenario, -1, -1, -1, -1, false, notes);
        }

        Row failed(String failure) {
            return new Row(scenario, operations, faults, lost, duplicated, false, notes + "; " + failure);
        }
    }

    /** The rows the running test wrote so far: what {@link #failed} turns to FAIL. Tests run one at a time. */
    private static final List<Row> recordedByRunningTest = new ArrayList<>();

    private Summary() {
    }

    static synchronized void record(Row row) {
        write(row);
        recordedByRunningTest.add(row);
    }

    /** A test starts: the rows it writes are its own. */
    static synchronized void testStarted() {
        recordedByRunningTest.clear();
    }

    /**
     * The running test failed with {@code cause}: the rows it wrote become FAIL rows noting the failure, and if it
     * wrote none, {@code test} gets one.
     */
    static synchronized void failed(String test, Throwable cause) {
        String failure = "FAILED: " + oneLine(cause);
        if (recordedByRunningTest.isEmpty()) {
            write(Row.failedBeforeMeasuring(test, failure));
        } else {
            recordedByRunningTest.forEach(row -> write(row.failed(failure)));
        }
        recordedByRunningTest.clear();
    }

    /** Something outside any test failed (a class's setup or teardown): {@code name} gets a FAIL row. */
    static synchronized void failedOutsideTests(String name, Throwable cause) {
        write(Row.failedBeforeMeasuring(name, "FAILED: " + oneLine(cause)));
    }

    static Path rows() {
        return Path.of(System.getProperty("once.reliability.rows", "target/reliability/rows"));
    }

    private static void write(Row row) {
        Path file = rows().resolve(row.scenario().replaceAll("[^A-Za-z0-9]+", "-") + ".tsv");
        String line = String.join("\t", row.scenario(), count(row.operations()), count(row.faults()),
                count(row.lost()), count(row.duplicated()), row.passed() ? "PASS" : "FAIL",
                row.notes().replace('\t', ' ').replace('\n', ' ')) + "\n";
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, line, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String count(long value) {
        return value < 0 ? "-" : Long.toString(value);
    }

    /** The failure on one line of the table: its type and its message, at most 300 characters. */
    private static String oneLine(Throwable cause) {
        String message = String.valueOf(cause.getMessage()).strip().replaceAll("\\s+", " ");
        String line = cause.getClass().getSimpleName() + ": " + message;
        return line.length() <= 300 ? line : line.substring(0, 297) + "...";
    }

    static List<String> header() {
        return List.of("scenario", "operations", "faults injected", "lost", "duplicated", "verdict", "notes");
    }
}
