package dev.once.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.idempotency.OnceMigrations;
import dev.once.test.TestDatabase;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** The operator audit on a real PostgreSQL: written with its effect or not at all, and never changed after. */
class OperatorAuditIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create();

    static OperatorAudit audit;
    static JdbcTemplate jdbc;

    @BeforeAll
    static void migrate() {
        OnceMigrations.migrate(db.dataSource());
        audit = OperatorAudit.create(db.dataSource());
        jdbc = new JdbcTemplate(db.dataSource());
        jdbc.execute("CREATE TABLE IF NOT EXISTS audit_effect (n int)");
    }

    @Test
    void an_action_is_recorded_with_who_why_what_and_how_many_rows() {
        Map<String, Object> filter = new LinkedHashMap<>();
        filter.put("handler_key", "mailer");
        filter.put("tenant_id", null);
        filter.put("older_than", Duration.ofHours(1));

        int n = audit.record(new Operator("alice", Operator.CONSOLE, "  mail service back  "), "parked.retry", filter,
                () -> jdbc.update("INSERT INTO audit_effect SELECT generate_series(1, 3)"));

        assertThat(n).isEqualTo(3);
        OperatorAudit.Entry entry = audit.recent(1).get(0);
        assertThat(entry.operator()).isEqualTo("alice");
        assertThat(entry.via()).isEqualTo("console");
        assertThat(entry.action()).isEqualTo("parked.retry");
        assertThat(entry.target()).as("criteria left out are not recorded")
                .isEqualTo(Map.of("handler_key", "mailer", "older_than", "PT1H"));
        assertThat(entry.reason()).isEqualTo("mail service back");
        assertThat(entry.affected()).isEqualTo(3);
    }

    @Test
    void an_action_that_fails_leaves_neither_its_effect_nor_its_entry() {
        long before = count();
        int effects = jdbc.queryForObject("SELECT count(*) FROM audit_effect", Integer.class);

        assertThatThrownBy(() -> audit.record(Operator.core("try"), "parked.abandon", Map.of(), () -> {
            jdbc.update("INSERT INTO audit_effect VALUES (1)");
            throw new IllegalStateException("the effect failed");
        })).hasMessage("the effect failed");

        assertThat(count()).isEqualTo(before);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM audit_effect", Integer.class)).isEqualTo(effects);
    }

    @Test
    void an_action_inside_a_transaction_commits_and_rolls_back_with_it() {
        long before = count();
        TransactionTemplate outer = new TransactionTemplate(new DataSourceTransactionManager(db.dataSource()));
        outer.executeWithoutResult(status -> {
            audit.record(Operator.core(null), "outbox.redrive", Map.of("event_id", "x"), () -> 0);
            status.setRollbackOnly();
        });
        assertThat(count()).isEqualTo(before);
    }

    @Test
    void entries_cannot_be_changed_or_deleted() {
        audit.record(Operator.core("kept"), "record.release", Map.of("idempotency_key", "k"), () -> 1);
        long id = audit.recent(1).get(0).id();

        for (String change : new String[] {
                "UPDATE once_operator_audit SET reason = 'rewritten' WHERE id = " + id,
                "UPDATE once_operator_audit SET affected = 0 WHERE id = " + id,
                "DELETE FROM once_operator_audit WHERE id = " + id,
                "TRUNCATE once_operator_audit"}) {
            assertThatThrownBy(() -> jdbc.execute(change)).as(change).isInstanceOf(DataAccessException.class)
                    .satisfies(e -> assertThat(((SQLException) e.getCause()).getSQLState()).isEqualTo("42501"));
        }
        assertThat(audit.recent(1).get(0).reason()).isEqualTo("kept");
    }

    @Test
    void an_operator_has_a_name_and_a_bounded_reason() {
        assertThatThrownBy(() -> new Operator(" ", Operator.CONSOLE, "x")).hasMessageContaining("operator's name");
        assertThatThrownBy(() -> new Operator("bob", Operator.CONSOLE, "x".repeat(Operator.MAX_REASON + 1)))
                .hasMessageContaining("at most 1000 characters");
        assertThat(Operator.core(null).reason()).isEmpty();
    }

    private static long count() {
        return jdbc.queryForObject("SELECT count(*) FROM once_operator_audit", Long.class);
    }
}
