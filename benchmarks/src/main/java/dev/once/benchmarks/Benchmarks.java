package dev.once.benchmarks;

import java.util.Arrays;
import java.util.Locale;

/**
 * Entry point: {@code benchmarks/run <name> [options]}. Every benchmark prints its figure beside a raw baseline
 * measured in the same run, alternating rounds of each, because a shared 2-core machine is noisy.
 */
public final class Benchmarks {

    private Benchmarks() {
    }

    public static void main(String[] args) throws Exception {
        String name = args.length == 0 ? "claim" : args[0].toLowerCase(Locale.ROOT);
        String[] rest = args.length == 0 ? args : Arrays.copyOfRange(args, 1, args.length);
        try {
            run(name, rest);
        } catch (Exception | Error e) {
            e.printStackTrace();
            System.exit(1); // the embedded broker's threads would otherwise keep the JVM alive
        }
        // embedded brokers and client threads are not daemons; a finished benchmark ends the JVM
        System.out.flush();
        System.exit(0);
    }

    private static void run(String name, String[] rest) throws Exception {
        switch (name) {
            case "claim" -> ClaimBenchmark.main(rest);
            case "guard" -> dev.once.benchmarks.guard.GuardBenchmark.main(rest);
            case "relay" -> dev.once.benchmarks.relay.RelayBenchmark.main(rest);
            case "dispatch" -> dev.once.benchmarks.dispatch.DispatchBenchmark.main(rest);
            case "retention" -> dev.once.benchmarks.retention.RetentionBenchmark.main(rest);
            case "sweep" -> SweepBenchmark.main(rest);
            case "scale" -> dev.once.benchmarks.scale.ScaleBenchmark.main(rest);
            case "record-sweep" -> dev.once.benchmarks.retention.RecordSweepBenchmark.main(rest);
            case "outbox-sweep" -> dev.once.benchmarks.retention.OutboxSweepBenchmark.main(rest);
            default -> {
                System.err.println("Unknown benchmark '" + name + "'; known: claim, guard, relay, dispatch, retention, record-sweep, outbox-sweep, sweep, scale");
                System.exit(2);
            }
        }
    }
}
