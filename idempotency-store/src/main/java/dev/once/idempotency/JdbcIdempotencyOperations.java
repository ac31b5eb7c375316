package dev.once.idempotency;

import dev.once.audit.Operator;
import dev.once.audit.OperatorAudit;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongConsumer;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;

/** {@link IdempotencyOperations} over JDBC: the diagnosis query, the sweeps and the force-release statement. */
final class JdbcIdempotencyOperations implements IdempotencyOperations {

    /** The fencing token moves on, so the released claimant's late completion is refused. */
    static final String FORCE_RELEASE = """
            UPDATE idempotency_record
            SET status = 'expired', locked_until = NULL, expires_at = statement_timestamp(),
                fencing_token = fencing_token + 1, updated_at = statement_timestamp()
            WHERE tenant_id = ? AND user_id = ? AND route = ? AND idempotency_key = ?
              AND status = 'processing' AND (? OR locked_until <= statement_timestamp())
            """;

    private final JdbcTemplate jdbc;
    private final DiagnoseQuery diagnoses;
    private final Sweeps sweeps;
    private final OperatorAudit audit;

    JdbcIdempotencyOperations(DataSource dataSource) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.diagnoses = new DiagnoseQuery(jdbc);
        this.sweeps = new Sweeps(jdbc);
        this.audit = OperatorAudit.create(dataSource);
    }

    @Override
    public ReleaseResult forceRelease(IdempotencyScope scope, boolean evenIfLeaseLive, Operator by) {
        Map<String, Object> target = new LinkedHashMap<>();
        target.put("tenant_id", scope.tenantId());
        target.put("user_id", scope.userId());
        target.put("route", scope.route().value());
        target.put("idempotency_key", scope.key().value());
        target.put("even_if_lease_live", evenIfLeaseLive);
        int rows = audit.record(by, "record.release", target, () -> jdbc.update(FORCE_RELEASE, scope.tenantId(),
                scope.userId(), scope.route().value(), scope.key().value(), evenIfLeaseLive));
        if (rows == 1) {
            return ReleaseResult.RELEASED;
        }
        Diagnosis now = diagnoses.diagnose(scope, null);
        if (now.state() == Diagnosis.State.MISSING) {
            return ReleaseResult.NOT_FOUND;
        }
        return now.status() == IdempotencyStatus.PROCESSING && now.state() == Diagnosis.State.IN_PROGRESS
                ? ReleaseResult.LEASE_LIVE : ReleaseResult.NOT_PROCESSING;
    }

    @Override
    public Diagnosis diagnose(IdempotencyScope scope, String requestHash) {
        return diagnoses.diagnose(scope, requestHash);
    }

    @Override
    public long countExpirable() {
        return sweeps.countExpirable();
    }

    @Override
    public SweepResult expire(int batchSize, LongConsumer progress) {
        return sweeps.expire(batchSize, progress);
    }

    @Override
    public SweepResult purge(Duration olderThan, int batchSize, LongConsumer progress) {
        return sweeps.purge(olderThan, batchSize, progress);
    }

    @Override
    public List<StuckRecord> findStuck(Duration olderThan, String tenantId, int limit) {
        return sweeps.findStuck(olderThan, tenantId, limit);
    }
}
