package dev.once.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.idempotency.OnceMigrations;
import dev.once.test.TestDatabase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Every numeric, duration and UUID flag of every command, at its type's extremes and beyond: a usage error (exit 2)
 * whose one line names the flag, never a stack trace. Each run carries a complete, valid command line against a real
 * schema, so that a value the converters wrongly let through would run the command instead of failing the test quietly.
 */
class CoreBadInputIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create().poolSize(2);

    enum Kind { COUNT, DURATION, ID }

    /** A typed flag, with the rest of a command line that would run. */
    record Flag(String command, String flag, Kind kind, List<String> rest) {
        String[] args(String value, boolean joined) {
            List<String> all = new ArrayList<>(List.of(command.split(" ")));
            all.addAll(joined ? List.of(flag + "=" + value) : List.of(flag, value));
            all.addAll(rest);
            return CoreRun.connectedTo(db, all.toArray(String[]::new));
        }

        @Override
        public String toString() {
            return "core " + command + " " + flag;
        }
    }

    static final String EVENT = "0190a8c2-7b3e-7c1a-9f2e-3b4c5d6e7f80";

    static final List<Flag> FLAGS = List.of(
            new Flag("idempotency expire", "--batch-size", Kind.COUNT, List.of("--yes")),
            new Flag("idempotency stuck", "--limit", Kind.COUNT, List.of()),
            new Flag("idempotency stuck", "--older-than", Kind.DURATION, List.of()),
            new Flag("idempotency purge", "--batch-size", Kind.COUNT, List.of("--older-than", "7d", "--yes")),
            new Flag("idempotency purge", "--older-than", Kind.DURATION, List.of("--yes")),
            new Flag("outbox status", "--parked-limit", Kind.COUNT, List.of()),
            new Flag("outbox status", "--max-slot-lag", Kind.DURATION, List.of()),
            new Flag("outbox redrive", "--event-id", Kind.ID, List.of("--yes")),
            new Flag("dispatch partitions", "--claim-retention", Kind.DURATION, List.of()),
            new Flag("dispatch failed", "--limit", Kind.COUNT, List.of()),
            new Flag("dispatch retry", "--event-id", Kind.ID, List.of("--handler-key", "projection", "--yes")),
            new Flag("dispatch parked list", "--limit", Kind.COUNT, List.of()),
            new Flag("dispatch parked list", "--older-than", Kind.DURATION, List.of()),
            new Flag("dispatch parked retry", "--older-than", Kind.DURATION, List.of()),
            new Flag("dispatch parked abandon", "--older-than", Kind.DURATION, List.of()),
            new Flag("audit", "--limit", Kind.COUNT, List.of()));

    static final List<String> BAD_COUNTS = List.of("0", "-0", "-1", "-2147483648", "1000001", "2147483647",
            "2147483648", "9223372036854775807", "9223372036854775808", "-9223372036854775809", "1".repeat(400), "1.5",
            "1e3", "0x10", "ten", "", " ",
            "\u0661\u0662"); // 12 in Arabic-Indic digits, which Integer.parseInt accepts

    static final List<String> BAD_DURATIONS = List.of("-1ms", "-5m", "-0001d", "PT-1S", "-PT1S", "P-1D", "36501d",
            "36500d1s", "P36500DT0.001S", "876001h", "99999999999999999999d", "9223372036854775807d",
            "9223372036854775807ms", "9223372036854775808ms", "P999999999999D", "PT9223372036854775807S",
            "PT99999999999999999999S", "P1Y", "PT", "5", "-2147483648", "soon", "", "5 m", "1.5h", "5M", "1e3s");

    static final List<String> BAD_UUIDS = List.of("not-a-uuid", "", "1-2-3-4-5", EVENT.substring(1), EVENT + "0",
            EVENT.replace("-", ""), "{" + EVENT + "}", EVENT.replace("80", "zz"), "-1", "2147483648",
            "ffffffff-ffff-ffff-ffff-ffffffffffff0000");

    static final List<String> GOOD_COUNTS = List.of("1", "1000000", "+7", "0042");
    static final List<String> GOOD_DURATIONS = List.of("0s", "0ms", "PT0S", "250ms", "36500d", "P36500D", "876000h",
            "3153600000000ms", " 5m ");
    static final List<String> GOOD_UUIDS = List.of("00000000-0000-0000-0000-000000000000",
            "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", EVENT);

    @BeforeAll
    static void migrate() {
        OnceMigrations.migrate(db.dataSource());
    }

    static Stream<Arguments> bad(Kind kind) {
        List<String> values = switch (kind) {
            case COUNT -> BAD_COUNTS;
            case DURATION -> BAD_DURATIONS;
            case ID -> BAD_UUIDS;
        };
        return cases(kind, values);
    }

    static Stream<Arguments> cases(Kind kind, List<String> values) {
        return FLAGS.stream().filter(f -> f.kind() == kind).flatMap(f -> values.stream().flatMap(v ->
                Stream.of(Arguments.of(f, v, false), Arguments.of(f, v, true))));
    }

    static Stream<Arguments> badCounts() {
        return bad(Kind.COUNT);
    }

    static Stream<Arguments> badDurations() {
        return bad(Kind.DURATION);
    }

    static Stream<Arguments> badUuids() {
        return bad(Kind.ID);
    }

    /** Durations that must be positive: zero is refused by the command itself (CoreIT covers it). */
    static final Set<String> POSITIVE_DURATIONS = Set.of("core dispatch partitions --claim-retention");

    static Stream<Arguments> goodValues() {
        return Stream.of(cases(Kind.COUNT, GOOD_COUNTS), cases(Kind.DURATION, GOOD_DURATIONS),
                cases(Kind.ID, GOOD_UUIDS)).flatMap(s -> s).filter(a -> {
                    Flag flag = (Flag) a.get()[0];
                    return !(POSITIVE_DURATIONS.contains(flag.toString()) && Duration.ZERO.equals(parse((String) a.get()[1])));
                });
    }

    private static Duration parse(String value) {
        try {
            return new Durations().convert(value);
        } catch (Exception e) {
            return null;
        }
    }

    @ParameterizedTest(name = "{0} ''{1}'' joined={2}")
    @MethodSource("badCounts")
    void a_count_outside_1_to_a_million_or_not_a_whole_number_is_a_usage_error_that_names_the_flag(
            Flag flag, String value, boolean joined) {
        assertUsageErrorNaming(flag, CoreRun.of(flag.args(value, joined)));
    }

    @ParameterizedTest(name = "{0} ''{1}'' joined={2}")
    @MethodSource("badDurations")
    void a_negative_overflowing_or_malformed_duration_is_a_usage_error_that_names_the_flag(
            Flag flag, String value, boolean joined) {
        assertUsageErrorNaming(flag, CoreRun.of(flag.args(value, joined)));
    }

    @ParameterizedTest(name = "{0} ''{1}'' joined={2}")
    @MethodSource("badUuids")
    void a_malformed_uuid_is_a_usage_error_that_names_the_flag(Flag flag, String value, boolean joined) {
        assertUsageErrorNaming(flag, CoreRun.of(flag.args(value, joined)));
    }

    /** Exit 2; the first line names the flag and why; the second points to --help; no stack frame, no class name. */
    private static void assertUsageErrorNaming(Flag flag, CoreRun run) {
        assertThat(run.exit()).as(run.err()).isEqualTo(Core.USAGE);
        assertThat(run.errLines()).as(run.err()).hasSize(2);
        assertThat(run.errLines().get(0)).startsWith("core: Invalid value for option '" + flag.flag() + "': ");
        assertThat(run.errLines().get(1)).isEqualTo("Try 'core " + flag.command() + " --help' for more information.");
        assertThat(run.err()).doesNotContain("\tat ").doesNotContain("Exception");
        assertThat(run.out()).isEmpty();
    }

    @ParameterizedTest(name = "{0} ''{1}'' joined={2}")
    @MethodSource("goodValues")
    void a_value_at_the_edge_of_its_range_is_accepted_and_the_command_runs(Flag flag, String value, boolean joined) {
        CoreRun run = CoreRun.of(flag.args(value, joined));

        // 1: a redrive or a retry of an event that is not parked or failed changed nothing, which is a finding.
        assertThat(run.exit()).as(run.err()).isIn(0, Core.FINDINGS);
        assertThat(run.err()).doesNotContain("core:");
    }

    @Test
    void the_corpus_covers_every_numeric_duration_and_uuid_flag_of_every_command() {
        Set<String> typed = new TreeSet<>();
        collectTypedFlags(new CommandLine(new Core()), typed);

        assertThat(typed).isEqualTo(FLAGS.stream().map(f -> "core " + f.command() + " " + f.flag())
                .collect(Collectors.toCollection(TreeSet::new)));
    }

    private static void collectTypedFlags(CommandLine command, Set<String> typed) {
        for (OptionSpec option : command.getCommandSpec().options()) {
            Class<?> type = option.type();
            if (type.isPrimitive() && type != boolean.class || Number.class.isAssignableFrom(type)
                    || type == Duration.class || type == UUID.class) {
                typed.add(command.getCommandSpec().qualifiedName() + " " + option.longestName());
            }
        }
        command.getSubcommands().values().forEach(sub -> collectTypedFlags(sub, typed));
    }
}
