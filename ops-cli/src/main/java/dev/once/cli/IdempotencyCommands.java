package dev.once.cli;

import dev.once.idempotency.Diagnosis;
import dev.once.idempotency.IdempotencyDefaults;
import dev.once.idempotency.IdempotencyOperations;
import dev.once.idempotency.IdempotencyScope;
import dev.once.idempotency.ReleaseResult;
import dev.once.idempotency.Route;
import dev.once.idempotency.StuckRecord;
import dev.once.idempotency.SweepResult;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code core idempotency …}: every command calls the store's operator API; none holds SQL of its own. */
@Command(name = "idempotency", description = "Diagnose and mend idempotency records.",
        subcommands = {IdempotencyCommands.Diagnose.class, IdempotencyCommands.Expire.class, IdempotencyCommands.Stuck.class,
                IdempotencyCommands.Release.class, IdempotencyCommands.Purge.class})
final class IdempotencyCommands {


    /** The four parts of a key's scope, as flags. */
    static final class ScopeOptions {
        @Option(names = "--tenant-id", required = true, description = "Tenant of the key")
        String tenantId;

        @Option(names = "--user-id", required = true, description = "User of the key")
        String userId;

        @Option(names = "--route", required = true, description = "Route template, e.g. 'POST /accounts'")
        String route;

        @Option(names = "--idempotency-key", required = true, description = "The Idempotency-Key")
        String key;

        IdempotencyScope scope() {
            return IdempotencyScope.of(tenantId, userId, Route.of(route), key);
        }
    }

    @Command(name = "diagnose", description = "What the store knows about one key: missing | replayable | "
            + "request_hash_conflict | in_progress | lease_expired | failed_requires_explicit_retry | expired_reusable.")
    static final class Diagnose implements Callable<Integer> {
        @Mixin Connection connection;
        @Mixin ScopeOptions scope;
        @Spec CommandSpec spec;

        @Option(names = "--request-hash", description = "Compare with this request hash (v1:…)")
        String requestHash;

        @Option(names = "--json", description = "Print the stable JSON form (see idempotency-store/README.md)")
        boolean json;

        @Override
        public Integer call() {
            IdempotencyScope s = scope.scope();
            Diagnosis d = IdempotencyOperations.create(connection.open()).diagnose(s, requestHash);
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                out.println(d.toJson());
            } else {
                Map<String, Object> fields = new LinkedHashMap<>(d.toMap());
                fields.values().removeIf(v -> v == null);
                Output.fields(out, fields);
            }
            return 0;
        }
    }

    @Command(name = "expire", description = "Mark records past their TTL as expired (clears locked_until). "
            + "Without --yes, only counts them.")
    static final class Expire implements Callable<Integer> {
        @Mixin Connection connection;
        @Spec CommandSpec spec;

        @Option(names = "--yes", description = "Do it; without it nothing changes")
        boolean yes;

        @Option(names = "--batch-size", defaultValue = "" + IdempotencyDefaults.SWEEP_BATCH_SIZE,
                converter = Counts.class,
                description = "Rows per short transaction, 1 to " + Counts.MAX + " (default ${DEFAULT-VALUE})")
        int batchSize;

        @Option(names = "--json", description = "Print JSON")
        boolean json;

        @Override
        public Integer call() {
            IdempotencyOperations store = IdempotencyOperations.create(connection.open());
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            if (!yes) {
                long n = store.countExpirable();
                print(out, json, Map.of("dry_run", true, "would_expire", n),
                        n + " record(s) would expire; run again with --yes to expire them");
                return 0;
            }
            SweepResult result = store.expire(batchSize, total -> err.println("expired " + total + " …"));
            Map<String, Object> fields = new LinkedHashMap<>();
            fields.put("dry_run", false);
            fields.put("expired", result.rows());
            fields.put("batches", result.batches());
            print(out, json, fields, "expired " + result.rows() + " record(s) in " + result.batches() + " batch(es)");
            return 0;
        }
    }

    @Command(name = "stuck", description = "Processing records whose lease lapsed or that are older than --older-than.")
    static final class Stuck implements Callable<Integer> {
        @Mixin Connection connection;
        @Spec CommandSpec spec;

        @Option(names = "--older-than", defaultValue = "5m", converter = Durations.class,
                description = "Age that counts as stuck even with a live lease, 0s to " + Durations.MAX_DAYS
                        + "d (default ${DEFAULT-VALUE})")
        Duration olderThan;

        @Option(names = "--tenant-id", description = "Only this tenant")
        String tenantId;

        @Option(names = "--limit", defaultValue = "1000", converter = Counts.class,
                description = "At most this many, 1 to " + Counts.MAX + " (default ${DEFAULT-VALUE})")
        int limit;

        @Option(names = "--json", description = "Print JSON")
        boolean json;

        @Option(names = "--fail-on-findings", description = "Exit 1 when stuck records exist")
        boolean failOnFindings;

        @Override
        public Integer call() {
            List<StuckRecord> stuck = IdempotencyOperations.create(connection.open()).findStuck(olderThan, tenantId, limit);
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                Output.json(out, stuck.stream().map(Stuck::toMap).toList());
            } else if (stuck.isEmpty()) {
                out.println("no stuck records");
            } else {
                Output.table(out, List.of("TENANT", "USER", "ROUTE", "KEY", "AGE", "ATTEMPTS", "LEASE"),
                        stuck.stream().map(s -> List.of(s.scope().tenantId(), s.scope().userId(), s.scope().route().value(),
                                s.scope().key().value(), Durations.human(s.age()), Long.toString(s.attempts()),
                                s.leaseLapsed() ? "lapsed" : "live")).toList());
            }
            return failOnFindings && !stuck.isEmpty() ? Core.FINDINGS : 0;
        }

        static Map<String, Object> toMap(StuckRecord s) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("tenant_id", s.scope().tenantId());
            m.put("user_id", s.scope().userId());
            m.put("route", s.scope().route().value());
            m.put("idempotency_key", s.scope().key().value());
            m.put("claimed_at", s.claimedAt().toString());
            m.put("locked_until", s.lockedUntil() == null ? null : s.lockedUntil().toString());
            m.put("age_seconds", s.age().toSeconds());
            m.put("attempts", s.attempts());
            m.put("lease_lapsed", s.leaseLapsed());
            return m;
        }
    }

    @Command(name = "release", description = "Force-release one stuck processing record so a retry can claim it. "
            + "Refuses a live lease unless --force.")
    static final class Release implements Callable<Integer> {
        @Mixin Connection connection;
        @Mixin ScopeOptions scope;
        @Spec CommandSpec spec;

        @Mixin Confirmation confirmation;

        @Option(names = "--force", description = "Release even though the lease is live (its owner must be gone)")
        boolean force;

        @Option(names = "--json", description = "Print JSON")
        boolean json;

        @Override
        public Integer call() {
            confirmation.require("release", "changes data");
            IdempotencyScope s = scope.scope();
            ReleaseResult result = IdempotencyOperations.create(connection.open()).forceRelease(s, force,
                    confirmation.operator());
            print(spec.commandLine().getOut(), json, Map.of("result", result.name().toLowerCase()),
                    result == ReleaseResult.LEASE_LIVE ? "the lease is live; add --force if its owner is gone" : result.name().toLowerCase());
            return result == ReleaseResult.RELEASED ? 0 : Core.FINDINGS;
        }
    }

    @Command(name = "purge", description = "Delete expired records whose expiry is older than --older-than, in batches.")
    static final class Purge implements Callable<Integer> {
        @Mixin Connection connection;
        @Spec CommandSpec spec;

        @Option(names = "--older-than", required = true, converter = Durations.class,
                description = "e.g. 7d; 0s to " + Durations.MAX_DAYS + "d")
        Duration olderThan;

        @Mixin Confirmation confirmation;

        @Option(names = "--batch-size", defaultValue = "" + IdempotencyDefaults.SWEEP_BATCH_SIZE,
                converter = Counts.class,
                description = "Rows per short transaction, 1 to " + Counts.MAX + " (default ${DEFAULT-VALUE})")
        int batchSize;

        @Option(names = "--json", description = "Print JSON")
        boolean json;

        @Override
        public Integer call() {
            confirmation.require("purge", "deletes data");
            PrintWriter err = spec.commandLine().getErr();
            SweepResult result = IdempotencyOperations.create(connection.open())
                    .purge(olderThan, batchSize, total -> err.println("purged " + total + " …"));
            print(spec.commandLine().getOut(), json, Map.of("purged", result.rows(), "batches", result.batches()),
                    "purged " + result.rows() + " record(s) in " + result.batches() + " batch(es)");
            return 0;
        }
    }

    static void print(PrintWriter out, boolean json, Map<String, ?> fields, String human) {
        if (json) {
            Output.json(out, new java.util.TreeMap<>(fields));
        } else {
            out.println(human);
        }
    }

    private IdempotencyCommands() {
    }
}
