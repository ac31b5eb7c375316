-- A sample expand step (RollingUpgradeIT), written by UPGRADING.md's rule, as a later release's migration would be.
-- It runs while instances of the previous version serve.
-- A lock only briefly, or fail and be retried: never queue every writer behind a long transaction. LOCAL: for this
-- migration's transaction only, not for the next migrations on the same connection.
SET LOCAL lock_timeout = '5s';
-- A nullable column, no default: no rewrite, and the previous version, which never names it, goes on writing.
ALTER TABLE idempotency_record ADD COLUMN sample_origin text;
