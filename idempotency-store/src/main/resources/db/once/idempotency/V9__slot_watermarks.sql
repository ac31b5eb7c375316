-- Once 0.1: the replication slot decides what is published (the CDC relay, and Kafka Connect in mode external).
-- A row leaves the outbox only once the slot that relays it has confirmed a WAL position past the row's commit:
--  * each row records the transaction that inserted it (xact_id);
--  * a watermark pairs a snapshot (the transactions that had ended when it was taken) with the WAL insert position read
--    right after (so their commit records lie below it), taken while a walsender streams the slot;
--  * once that same walsender's slot has confirmed a position past the watermark's, the rows of the transactions its
--    snapshot sees are published. (A long transaction holds back only its own rows.)
-- Rows appended before this migration have no xact_id: they committed before it, so below every watermark after it.
-- No rewrite: the column is added empty, and only new rows get the default.
ALTER TABLE outbox_event ADD COLUMN xact_id xid8;
ALTER TABLE outbox_event ALTER COLUMN xact_id SET DEFAULT pg_current_xact_id();

CREATE TABLE once_relay_watermark (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    slot_name      text NOT NULL,
    snapshot       pg_snapshot NOT NULL, -- pg_current_snapshot(): the transactions it sees had committed or aborted
    lsn            pg_lsn NOT NULL,      -- pg_current_wal_insert_lsn() right after: their commit records lie below
    seq_bound      bigint NOT NULL,      -- the highest seq of a row pending then: every row the snapshot sees, at most
    server_started timestamptz NOT NULL, -- the walsender that streamed the slot: the server's start ...
    walsender_pid  integer NOT NULL,     -- ... and its process; only that session's confirmation counts
    taken_at       timestamptz NOT NULL DEFAULT now(),
    confirmed_at   timestamptz           -- when that session's slot was seen to have confirmed lsn
);
CREATE INDEX once_relay_watermark_slot_idx ON once_relay_watermark (slot_name, lsn);
