package dev.once.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.example.demo.DemoReport;
import dev.once.test.TestDatabase;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The upgrade harness's own test: a rolling deploy of two instances under traffic, across a sample expand/contract
 * migration written by UPGRADING.md's rule (a nullable column and an index built concurrently, then both dropped).
 */
@ExtendWith(SummaryWatcher.class)
class RollingUpgradeIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(2);

    @TempDir
    static Path dataDir;

    @Test
    void a_rolling_deploy_across_an_expand_and_contract_migration_fails_no_request_and_loses_nothing() {
        RollingUpgrade.Result result = RollingUpgrade.of(db, dataDir,
                List.of("classpath:db/once/upgrade-sample/expand"),
                List.of("classpath:db/once/upgrade-sample/contract")).instances(2).run();

        long operations = result.rounds().stream().mapToLong(DemoReport::operations).sum();
        Summary.record(new Summary.Row("rolling deploy across expand/contract", operations, 2, // two restarts
                result.rounds().stream().mapToLong(r -> r.lost() + r.halfWritten()).sum(),
                result.rounds().stream().mapToLong(DemoReport::duplicates).sum(),
                result.rounds().stream().allMatch(DemoReport::passed) && result.errors().isEmpty(),
                result.rounds().size() + " rounds of traffic; expanded " + result.expanded() + ", contracted "
                        + result.contracted()));
        assertThat(result.expanded()).containsExactly("9000 sample add column", "9001 sample index");
        assertThat(result.contracted()).containsExactly("9002 sample drop index", "9003 sample drop column");
        RollingUpgrade.assertSafe(result);
    }
}
