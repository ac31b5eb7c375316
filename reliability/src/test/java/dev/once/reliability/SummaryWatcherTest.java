package dev.once.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.platform.launcher.EngineFilter;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * The summary table shows every scenario that failed, however it failed. Sample scenarios (the nested classes, run
 * here through the JUnit Platform, never on their own) write their rows to a temporary directory.
 */
class SummaryWatcherTest {

    @TempDir
    Path rows;
    String rowsBefore;

    @BeforeEach
    void rowsToTemporaryDirectory() {
        rowsBefore = System.getProperty("once.reliability.rows");
        System.setProperty("once.reliability.rows", rows.toString());
    }

    @AfterEach
    void rowsBack() {
        if (rowsBefore == null) {
            System.clearProperty("once.reliability.rows");
        } else {
            System.setProperty("once.reliability.rows", rowsBefore);
        }
    }

    @Test
    void a_scenario_that_times_out_before_writing_its_row_gets_a_fail_row_named_after_the_test_saying_why() {
        run(TimesOutBeforeItsRow.class);

        assertThat(rows()).singleElement().satisfies(row -> {
            assertThat(row.split("\t")).startsWith(
                    "TimesOutBeforeItsRow kill_point_never_reached", "-", "-", "-", "-", "FAIL");
            assertThat(row.split("\t")[6]).startsWith("FAILED: ConditionTimeoutException: Condition with alias 'kill point'");
        });
    }

    @Test
    void a_scenario_that_fails_after_writing_its_row_has_that_row_turned_to_fail_with_its_numbers_kept() {
        run(FailsAfterItsRow.class);

        assertThat(rows()).singleElement().satisfies(row -> assertThat(row.split("\t")).containsExactly(
                "sample: recorded, then failed", "10", "2", "0", "0", "FAIL",
                "looked fine; FAILED: AssertionFailedError: [kills] expected: 2 but was: 1"));
    }

    @Test
    void a_scenario_that_passes_keeps_its_pass_row_and_each_parameterized_run_gets_its_own_row() {
        run(ParameterizedSample.class);

        assertThat(rows()).containsExactlyInAnyOrder(
                String.join("\t", "sample cdc", "1", "0", "0", "0", "PASS", "fine"),
                String.join("\t", "ParameterizedSample fails_for_polling [\"polling\"]", "-", "-", "-", "-", "FAIL",
                        "FAILED: IllegalStateException: broker gone"));
    }

    @Test
    void a_class_whose_setup_fails_gets_one_fail_row() {
        run(SetupFails.class);

        assertThat(rows()).containsExactly(String.join("\t", "SetupFails (setup or teardown)", "-", "-", "-", "-",
                "FAIL", "FAILED: IllegalStateException: the service did not start"));
    }

    static void run(Class<?> sample) {
        LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(sample))
                .filters(EngineFilter.includeEngines("junit-jupiter")).build());
    }

    List<String> rows() {
        try (Stream<Path> files = Files.list(rows)) {
            return files.sorted().flatMap(file -> {
                try {
                    return Files.readAllLines(file).stream();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }).toList();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    // -- sample scenarios ---------------------------------------------------------------------------------------

    @ExtendWith(SummaryWatcher.class)
    static class TimesOutBeforeItsRow {
        @Test
        void kill_point_never_reached() {
            awaitKillPoint();
            Summary.record(new Summary.Row("sample: never written", 1, 1, 0, 0, true, ""));
        }

        /** What a scenario's await throws when its deadline passes, thrown at once instead of after a deadline. */
        static void awaitKillPoint() {
            throw new ConditionTimeoutException("Condition with alias 'kill point' didn't complete within 2 minutes "
                    + "because condition returned false.");
        }
    }

    @ExtendWith(SummaryWatcher.class)
    static class FailsAfterItsRow {
        @Test
        void recorded_then_failed() {
            Summary.record(new Summary.Row("sample: recorded, then failed", 10, 2, 0, 0, true, "looked fine"));
            assertThat(1).as("kills").isEqualTo(2);
        }
    }

    @ExtendWith(SummaryWatcher.class)
    static class ParameterizedSample {
        @ParameterizedTest(name = "{0}")
        @ValueSource(strings = {"cdc", "polling"})
        void fails_for_polling(String mode) {
            if (mode.equals("polling")) {
                throw new IllegalStateException("broker gone");
            }
            Summary.record(new Summary.Row("sample " + mode, 1, 0, 0, 0, true, "fine"));
        }
    }

    @ExtendWith(SummaryWatcher.class)
    static class SetupFails {
        @BeforeAll
        static void start() {
            throw new IllegalStateException("the service did not start");
        }

        @Test
        void never_runs() {
            Summary.record(new Summary.Row("sample: never runs", 1, 1, 0, 0, true, ""));
        }
    }
}
