package dev.once.reliability;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

/**
 * The suite's summary: one row per scenario, written by each scenario as it ends to
 * {@code target/reliability/rows/<scenario>.tsv} (a rerun replaces its row), and printed as a table by
 * {@code reliability/run}.
 */
final class Summary {

    record Row(String scenario, long operations, long faults, long lost, long duplicated, boolean passed, String notes) {
    }

    private Summary() {
    }

    static synchronized void record(Row row) {
        Path rows = Path.of(System.getProperty("once.reliability.rows", "target/reliability/rows"));
        Path file = rows.resolve(row.scenario().replaceAll("[^A-Za-z0-9]+", "-") + ".tsv");
        String line = String.join("\t", row.scenario(), Long.toString(row.operations()), Long.toString(row.faults()),
                Long.toString(row.lost()), Long.toString(row.duplicated()), row.passed() ? "PASS" : "FAIL",
                row.notes().replace('\t', ' ').replace('\n', ' ')) + "\n";
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, line, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<String> header() {
        return List.of("scenario", "operations", "faults injected", "lost", "duplicated", "verdict", "notes");
    }
}
