-- A sample expand step: an index on a hot table, built without blocking writers (CONCURRENTLY, which must run outside
-- a transaction, so in a migration of its own; Flyway runs it so). No lock_timeout: it waits for the transactions
-- older than it without holding writers up, and a timeout would leave an INVALID index behind.
CREATE INDEX CONCURRENTLY idempotency_record_sample_origin_idx ON idempotency_record (sample_origin)
    WHERE sample_origin IS NOT NULL;
