package dev.once.spi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.idempotency.OnceMigrations;
import dev.once.test.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

/** What the relays do with a row once Kafka has acknowledged its event, on a real PostgreSQL. */
class OutboxLedgerIT {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.create();

    JdbcTemplate jdbc;

    @BeforeAll
    static void migrate() {
        OnceMigrations.migrate(db.dataSource());
    }

    @BeforeEach
    void setUp() {
        jdbc = new JdbcTemplate(db.dataSource());
        jdbc.update("DELETE FROM outbox_event");
    }

    @Test
    void settling_deletes_the_published_rows_and_reports_the_ones_it_did_not_find() {
        UUID visible = insert();
        UUID gone = UUID.randomUUID();
        OutboxLedger ledger = new OutboxLedger(jdbc, Duration.ZERO);

        assertThat(ledger.settle(List.of(visible, gone))).containsExactly(gone);
        assertThat(pending()).isZero();
    }

    @Test
    void a_row_is_parked_once_with_the_reason_it_was_parked_for_first_and_a_row_not_found_is_reported() {
        UUID refused = insert();
        UUID notYetVisible = UUID.randomUUID();
        OutboxLedger ledger = new OutboxLedger(jdbc, Duration.ZERO);

        assertThat(ledger.park(Map.of(refused, "RecordTooLargeException", notYetVisible, OutboxLedger.behind("order/o-1"))))
                .containsExactly(notYetVisible);
        assertThat(ledger.park(Map.of(refused, OutboxLedger.behind("order/o-1")))).as("parked already: found").isEmpty();
        assertThat(jdbc.queryForObject("SELECT park_reason FROM outbox_event WHERE id = ?", String.class, refused))
                .isEqualTo("RecordTooLargeException");
    }

    @Test
    void a_transaction_is_in_progress_until_it_ends_as_logical_decoding_numbers_it() throws Exception {
        OutboxLedger ledger = new OutboxLedger(jdbc, Duration.ZERO);
        long ended = jdbc.queryForObject(XID, Long.class); // its own transaction, over once the statement returns
        try (java.sql.Connection open = db.dataSource().getConnection()) {
            open.setAutoCommit(false);
            long running;
            try (java.sql.Statement s = open.createStatement(); java.sql.ResultSet rs = s.executeQuery(XID)) {
                rs.next();
                running = rs.getLong(1);
            }
            assertThat(ledger.inProgress(List.of(running, ended))).containsExactly(running);
            open.commit();
            assertThat(ledger.inProgress(List.of(running, ended))).isEmpty();
        }
        assertThat(ledger.inProgress(List.of())).isEmpty();
    }

    /** The current transaction's id in 32 bits, as logical decoding (and Debezium's {@code source.txId}) gives it. */
    static final String XID = "SELECT CAST(CAST(pg_current_xact_id() AS text) AS bigint) % 4294967296";

    @Test
    void with_a_retention_period_settling_marks_the_rows_published() {
        UUID id = insert();
        OutboxLedger ledger = new OutboxLedger(jdbc, Duration.ofDays(7));

        assertThat(ledger.settle(List.of(id))).isEmpty();
        assertThat(jdbc.queryForObject("SELECT published_at IS NOT NULL FROM outbox_event WHERE id = ?", Boolean.class, id))
                .isTrue();
    }

    private UUID insert() {
        return insert(UUID.randomUUID());
    }

    private UUID insert(UUID id) {
        jdbc.update("""
                INSERT INTO outbox_event (id, tenant_id, actor_id, aggregate_type, aggregate_id, event_type, event_version, payload)
                VALUES (?, 'acme', 'alice', 'order', 'o-1', 'OrderPlaced', 1, '{}')
                """, id);
        return id;
    }

    private long pending() {
        return jdbc.queryForObject("SELECT count(*) FROM outbox_event WHERE published_at IS NULL", Long.class);
    }
}
