-- A sample contract step: drop what only the previous version needed, under a short lock_timeout.
SET LOCAL lock_timeout = '5s';
ALTER TABLE idempotency_record DROP COLUMN IF EXISTS sample_origin;
