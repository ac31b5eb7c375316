package dev.once.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.SocketException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import org.junit.jupiter.api.Test;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.UncategorizedSQLException;
import org.springframework.transaction.TransactionSystemException;

class TransientFailuresTest {

    @Test
    void a_lost_connection_a_shutdown_and_an_exhausted_pool_are_transient() {
        assertThat(TransientFailures.isTransient(new UncategorizedSQLException("update", "UPDATE x",
                new SQLException("I/O error", "08006", new SocketException("Broken pipe"))))).isTrue();
        assertThat(TransientFailures.isTransient(new RuntimeException(new SQLException("terminating", "57P01")))).isTrue();
        assertThat(TransientFailures.isTransient(new SQLTransientConnectionException("pool timed out"))).isTrue();
        assertThat(TransientFailures.isTransient(new SQLException("could not serialize", "40001"))).isTrue();
    }

    @Test
    void a_rollback_that_failed_on_its_connection_is_transient_even_without_a_sqlstate() {
        assertThat(TransientFailures.isTransient(new TransactionSystemException("Could not roll back",
                new SQLException("Connection is closed")))).isTrue();
    }

    @Test
    void the_works_own_failures_are_not() {
        assertThat(TransientFailures.isTransient(new DuplicateKeyException("dup", new SQLException("dup", "23505")))).isFalse();
        assertThat(TransientFailures.isTransient(new DataIntegrityViolationException("check"))).isFalse();
        assertThat(TransientFailures.isTransient(new IllegalStateException("bug"))).isFalse();
        assertThat(TransientFailures.isTransient(new SQLException("Connection is closed"))).isFalse();
    }
}
