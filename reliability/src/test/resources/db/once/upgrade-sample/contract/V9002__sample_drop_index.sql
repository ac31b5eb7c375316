-- A sample contract step (RollingUpgradeIT): it runs once no instance of the previous version is left.
DROP INDEX CONCURRENTLY IF EXISTS idempotency_record_sample_origin_idx;
