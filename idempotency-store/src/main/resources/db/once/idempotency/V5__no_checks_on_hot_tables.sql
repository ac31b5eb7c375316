-- Once 0.1: no CHECK constraints on the two tables every guarded request and every outbox append writes.
-- PostgreSQL rebuilds each CHECK expression from its stored text (and plans it) for every INSERT or UPDATE statement
-- that touches the table: 13 % of the server's CPU on the guarded request path (perf, pgbench; docs/BENCHMARKS.md).
-- Once checks the same rules before it writes: keys are 1-255 visible ASCII characters (IdempotencyKey), scopes are
-- not empty (IdempotencyScope), events have their fields and a version of 1 or more (OutboxEvent), and statuses and
-- leases are written only by the store's own statements. NOT NULL columns and the unique keys stay.
ALTER TABLE idempotency_record
    DROP CONSTRAINT idempotency_record_status_ck,
    DROP CONSTRAINT idempotency_record_key_ck,
    DROP CONSTRAINT idempotency_record_scope_ck,
    DROP CONSTRAINT idempotency_record_lease_ck;
ALTER TABLE outbox_event
    DROP CONSTRAINT outbox_event_version_ck,
    DROP CONSTRAINT outbox_event_fields_ck;
